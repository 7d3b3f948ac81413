// SPDX-License-Identifier: GPL-2.0
/*
 * Naming a container: a pid, or an LXC container name.
 *
 * An LXC name is resolved by running `lxc-info -n NAME -p -H` rather than
 * by linking liblxc: shiftctl then builds and runs on hosts (and in test
 * guests) without LXC, carries no dependency on liblxc's ABI, and gets the
 * lxcpath and configuration handling of the LXC that is installed.  The
 * answer is the pid of the container's init, read through the host's
 * /proc, so the maps are those of the container's user namespace as seen
 * from the initial one.
 */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "shiftctl.h"

extern char **environ;

static ssize_t read_all(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	while (len + 1 < size) {
		n = read(fd, buf + len, size - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

static int lxc_info_pid(const char *name, pid_t *pid)
{
	char *const argv[] = { "lxc-info", "-n", (char *)name, "-p", "-H", NULL };
	_cleanup_close_ int out_r = -EBADF, out_w = -EBADF;
	_cleanup_close_ int err_r = -EBADF, err_w = -EBADF;
	posix_spawn_file_actions_t fa;
	char out[256], errbuf[512], *nl;
	int fds[2], status, ret;
	pid_t child;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	out_r = fds[0];
	out_w = fds[1];
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	err_r = fds[0];
	err_w = fds[1];

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out_w, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, err_w, STDERR_FILENO);
	ret = posix_spawnp(&child, "lxc-info", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret == ENOENT) {
		warnx("container %s: lxc-info not found (is LXC installed? a container can also be named by its init pid)",
			 name);
		return -ENOENT;
	}
	if (ret) {
		warnc(ret, "container %s: cannot run lxc-info", name);
		return -ret;
	}
	closep(&out_w);
	closep(&err_w);
	/* lxc-info's answers are a line or two: one pipe never fills up */
	read_all(out_r, out, sizeof(out));
	read_all(err_r, errbuf, sizeof(errbuf));
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;

	chomp(out);
	nl = strchr(errbuf, '\n');
	if (nl)
		*nl = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		warnx("unknown container %s%s%s%s", name,
			 *errbuf ? " (lxc-info: " : "", errbuf,
			 *errbuf ? ")" : "");
		return -ESRCH;
	}
	if (!*out) {
		warnx("container %s is not running", name);
		return -ESRCH;
	}
	if (!all_digits(out)) {
		warnx("container %s: unexpected answer from lxc-info: '%s'",
			 name, out);
		return -EINVAL;
	}
	*pid = (pid_t)strtol(out, NULL, 10);
	return 0;
}

int container_resolve(const char *name, pid_t *pid)
{
	char path[64];
	long n;

	if (!all_digits(name))
		return lxc_info_pid(name, pid);

	errno = 0;
	n = strtol(name, NULL, 10);
	if (errno || n <= 0 || n > 4194304) {
		warnx("pid %s: out of range", name);
		return -ERANGE;
	}
	snprintf(path, sizeof(path), "/proc/%ld", n);
	if (access(path, F_OK)) {
		warnx("pid %ld: no such process", n);
		return -ESRCH;
	}
	*pid = (pid_t)n;
	return 0;
}

int pid_maps(pid_t pid, bool allow_identity, struct idmap *uid,
	     struct idmap *gid)
{
	_cleanup_free_ char *utext = NULL, *gtext = NULL;
	char path[64], what[32], err[512];
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	ret = read_text(path, &utext);
	if (!ret) {
		snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
		ret = read_text(path, &gtext);
	}
	if (ret) {
		if (ret == -ENOENT)
			warnx("pid %d: no such process", (int)pid);
		else
			warnc(-ret, "%s", path);
		return ret;
	}
	snprintf(what, sizeof(what), "pid %d", (int)pid);
	ret = idmap_derive(utext, gtext, allow_identity, what, uid, gid,
			   err, sizeof(err));
	if (ret)
		warnx("%s", err);
	return ret;
}

void map_source_init(struct map_source *ms)
{
	idmap_init(&ms->uid);
	idmap_init(&ms->gid);
	ms->pid = NULL;
	ms->container = NULL;
}

int map_source_option(const struct sc_cmd *cmd, struct map_source *ms,
		      int c, const char *arg)
{
	char err[512];

	switch (c) {
	case 'u':
	case 'g':
		if (idmap_add_string(c == 'u' ? &ms->uid : &ms->gid,
				     c == 'u' ? IDMAP_UID : IDMAP_GID,
				     arg, err, sizeof(err)))
			return cmd_usage_error(cmd, "%s", err);
		return 0;
	case 'p':
		if (!all_digits(arg))
			return cmd_usage_error(cmd, "--pid '%s': not a pid", arg);
		ms->pid = arg;
		return 0;
	case 'c':
		ms->container = arg;
		return 0;
	default:
		return -1;
	}
}

bool map_source_from_process(const struct map_source *ms)
{
	return ms->pid || ms->container;
}

int map_source_check(const struct sc_cmd *cmd, const struct map_source *ms)
{
	if (ms->pid && ms->container)
		return cmd_usage_error(cmd, "--pid and --container are mutually exclusive");
	if (map_source_from_process(ms) && (ms->uid.nr || ms->gid.nr))
		return cmd_usage_error(cmd, "--uidmap/--gidmap do not combine with --pid/--container");
	return 0;
}

int map_source_resolve(struct map_source *ms, bool allow_identity)
{
	pid_t pid;

	if (!map_source_from_process(ms))
		return 0;
	if (container_resolve(ms->pid ? ms->pid : ms->container, &pid) ||
	    pid_maps(pid, allow_identity, &ms->uid, &ms->gid))
		return -1;
	return 0;
}
