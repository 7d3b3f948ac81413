// SPDX-License-Identifier: GPL-2.0
/*
 * shiftctl - set up and inspect shiftfs mounts.
 *
 * The command table, usage and the helpers every command shares.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/stat.h>

#include "shiftctl.h"

#define OPT_HELP_VERSION \
	" -h, --help                   display this help\n" \
	" -V, --version                display version\n"

static const struct sc_cmd commands[] = {
	{ .name = "mount", .handler = cmd_mount,
	  .args = "[options] SRC DST",
	  .help = "mount directory or image file SRC shifted on DST",
	  .options =
		" -u, --uidmap FROM:TO:COUNT   underlying uid FROM+i shows as TO+i (repeatable)\n"
		" -g, --gidmap FROM:TO:COUNT   underlying gid FROM+i shows as TO+i (repeatable)\n"
		" -p, --pid PID                take the maps from the user namespace of PID\n"
		" -c, --container NAME         take the maps from the init of container NAME\n"
		" -r, --ro                     mount read-only (and the image, if any)\n"
		"     --suid                   honour setuid bits and file capabilities\n"
		"                                (default: nosuid; see below)\n"
		"     --allow-identity         accept a PID outside any user namespace\n",
	  .notes =
		"The mount is nodev and nosuid, and noexec or nosuid if SRC's mount is.\n"
		"Use --suid only for a tree whose setuid binaries are the container's\n"
		"own, e.g. its rootfs; never with a map that hands out ids host users\n"
		"do not own.\n"
		"In a user namespace, without maps: mount from the mark on SRC with\n"
		"the namespace's own maps.\n",
	},
	{ .name = "umount", .handler = cmd_umount,
	  .args = "DST",
	  .help =
		"unmount the shiftfs mount on DST (and release its loop device)",
	  .options = "",
	},
	{ .name = "attach", .handler = cmd_attach,
	  .args = "[options] CONTAINER IMAGE",
	  .help =
		"graft directory or image file IMAGE, shifted, into a running container",
	  .options =
		" -P, --path PATH              where in the container (default /mnt/shiftfs-<name of IMAGE>)\n"
		" -r, --ro                     attach read-only\n"
		"     --suid                   honour setuid bits and file capabilities\n"
		"                                (default: nosuid, as for mount)\n"
		"     --allow-identity         accept a container outside any user namespace\n",
	},
	{ .name = "detach", .handler = cmd_detach,
	  .args = "CONTAINER PATH",
	  .help = "unmount an attached image from a running container",
	  .options = "",
	},
	{ .name = "maps", .handler = cmd_maps,
	  .args = "[options] PID|CONTAINER",
	  .help =
		"print the uidmap=,gidmap= options derived from a process or container",
	  .options =
		" -J, --json                   use JSON output format\n"
		"     --allow-identity         accept a process outside any user namespace\n",
	},
	{ .name = "mark", .handler = cmd_mark,
	  .args = "[options] DIR | --declared",
	  .help = "let user namespaces with allowed maps shift-mount DIR",
	  .options =
		" -u, --uidmap FROM:TO:COUNT   allow underlying uid FROM+i shown as TO+i (repeatable)\n"
		" -g, --gidmap FROM:TO:COUNT   allow underlying gid FROM+i shown as TO+i (repeatable)\n"
		" -p, --pid PID                allow the maps of the user namespace of PID\n"
		" -c, --container NAME         allow the maps of container NAME\n"
		"     --user NAME              allow NAME's /etc/subuid and /etc/subgid ranges\n"
		"     --own-ids                with --user: and NAME's own uid and gid, unshifted\n"
		"     --declare                also declare the mark in /etc/shiftfs/marks, made\n"
		"                                again at every boot (shiftfs-marks.service)\n"
		"     --declared               make every mark /etc/shiftfs/marks declares\n",
	  .notes =
		"A declared mark's path is walked without following symbolic links, and\n"
		"must be one only root can change: every component owned by root, every\n"
		"directory above DIR writable by root alone or sticky.\n",
	},
	{ .name = "unmark", .handler = cmd_unmark,
	  .args = "DIR | --declared",
	  .help = "drop the mark of DIR and its declaration (mounts made from it stay)",
	  .options =
		"     --declared               drop every declared mark, keep the declarations\n",
	},
	{ .name = "list", .handler = cmd_list,
	  .args = "[options]",
	  .help = "list shiftfs mounts and their maps",
	  .options =
		" -J, --json                   use JSON output format\n"
		" -r, --raw                    use raw output format\n"
		" -n, --noheadings             don't print headings\n"
		" -o, --output LIST            the columns to show (+LIST: add to the\n"
		"                                default TARGET,SOURCE,MODE,NOSUID,MAPS)\n",
	  .more_help = list_columns_help,
	},
	{ .name = "lxc-hook", .handler = cmd_lxchook,
	  .args = "[NAME SECTION TYPE]",
	  .help = "the LXC hook: shift an unprivileged container's rootfs at start",
	  .options = "",
	  .notes =
		"Run by LXC through lxc-hook/shiftfs as its pre-start, pre-mount,\n"
		"start-host and post-stop hook (lxc.hook.version 0 or 1), with the\n"
		"environment LXC gives hooks.  Records in $SHIFTFS_LXC_STATE\n"
		"(default /run/shiftfs-lxc).\n",
	},
	{ .name = "check", .handler = cmd_check,
	  .args = "[options]",
	  .help = "report what this kernel supports",
	  .options = " -J, --json                   use JSON output format\n",
	},
};

void sc_debug(const char *fmt, ...)
{
	va_list ap;

	if (!getenv("SHIFTCTL_DEBUG"))
		return;
	fprintf(stderr, "%s: debug: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void print_version(void)
{
	printf("shiftctl %s\n", SHIFTCTL_VERSION);
}

static void usage(FILE *out)
{
	size_t i;

	fputs("Usage:\n"
	      " shiftctl <command> [options] [arguments]\n"
	      "\n"
	      "Set up and inspect shiftfs mounts: a directory tree or disk image\n"
	      "shown with its uids and gids shifted.\n"
	      "\n"
	      "Commands:\n", out);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, " %-8s %s\n", commands[i].name, commands[i].help);
	fputs("\n"
	      "Options:\n"
	      OPT_HELP_VERSION
	      "\n"
	      "Run 'shiftctl <command> --help' for the options of a command.\n"
	      "For more details see shiftctl(8).\n", out);
}

void cmd_usage(const struct sc_cmd *cmd, FILE *out)
{
	fprintf(out, "Usage:\n shiftctl %s %s\n\n", cmd->name, cmd->args);
	fprintf(out, "%c%s.\n\n", cmd->help[0] - 'a' + 'A', cmd->help + 1);
	fprintf(out, "Options:\n%s" OPT_HELP_VERSION, cmd->options);
	if (cmd->notes)
		fprintf(out, "\n%s", cmd->notes);
	if (cmd->more_help)
		cmd->more_help(out);
	fputs("\nFor more details see shiftctl(8).\n", out);
}

int cmd_usage_error(const struct sc_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vwarnx(fmt, ap);
		va_end(ap);
	}
	if (cmd)
		fprintf(stderr, "Try 'shiftctl %s --help' for more information.\n",
			cmd->name);
	else
		fputs("Try 'shiftctl --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Read a small text file (a /proc map, a lxc-info answer) whole. */
int read_text(const char *path, char **text)
{
	_cleanup_close_ int fd = -EBADF;
	size_t len = 0, size = 4096;
	char *buf, *nbuf;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len + 1 >= size) {
			if (size >= (1 << 20)) {
				free(buf);
				return -EFBIG;
			}
			nbuf = realloc(buf, size *= 2);
			if (!nbuf) {
				free(buf);
				return -ENOMEM;
			}
			buf = nbuf;
		}
		n = read(fd, buf + len, size - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			free(buf);
			return (int)n;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*text = buf;
	return 0;
}

int need_cap_sys_admin(const char *hint)
{
	cap_flag_value_t val = CAP_CLEAR;
	cap_t caps;

	caps = cap_get_proc();
	if (!caps) {
		warn("cannot read own capabilities");
		return -EPERM;
	}
	if (cap_get_flag(caps, CAP_SYS_ADMIN, CAP_EFFECTIVE, &val))
		val = CAP_CLEAR;
	cap_free(caps);
	if (val != CAP_SET) {
		warnx("needs CAP_SYS_ADMIN (%s)", hint);
		return -EPERM;
	}
	return 0;
}

/* Are we inside a user namespace (own uid_map not the identity)? */
bool in_user_namespace(void)
{
	_cleanup_free_ char *text = NULL;
	struct idmap self;

	return read_text("/proc/self/uid_map", &text) == 0 &&
	       idmap_parse_proc(&self, text, "/proc/self/uid_map", NULL, 0) == 0 &&
	       !idmap_is_identity(&self);
}

/*
 * Mounting shiftfs with explicit maps needs CAP_SYS_ADMIN in the initial
 * user namespace: say so before touching anything rather than after a
 * half-built mount fails with EPERM.
 */
int need_privileges(void)
{
	int ret;

	ret = need_cap_sys_admin("run it as root");
	if (ret)
		return ret;
	if (in_user_namespace()) {
		warnx("runs inside a user namespace; explicit shiftfs maps need CAP_SYS_ADMIN in the initial one");
		return -EPERM;
	}
	return 0;
}

int common_option(const struct sc_cmd *cmd, int c)
{
	switch (c) {
	case 'h':
		cmd_usage(cmd, stdout);
		return EXIT_SUCCESS;
	case 'V':
		print_version();
		return EXIT_SUCCESS;
	default:
		return cmd_usage_error(cmd, NULL);
	}
}

/* Only "-h" and "-V": the commands whose arguments are all operands. */
int plain_options(const struct sc_cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help",    no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	c = getopt_long(argc, argv, "hV", longopts, NULL);
	return c == -1 ? -1 : common_option(cmd, c);
}

int check_dir(const char *path, const char *why)
{
	struct stat st;
	int e;

	if (stat(path, &st)) {
		e = errno;
		warn("%s", path);
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		warnx("%s: not a directory%s", path, why);
		return -ENOTDIR;
	}
	return 0;
}

static const struct sc_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/*
 * Run command @name as "shiftctl NAME ARGS..." would (its messages
 * prefixed "shiftctl NAME:"), from another command: the LXC hook marks,
 * mounts and unmarks with exactly what mark, mount and unmark do.
 * argv[0] is the command's name.  Returns its exit status.
 */
int run_command(const char *name, int argc, char **argv)
{
	char *saved_short = program_invocation_short_name;
	char *saved_name = program_invocation_name;
	const struct sc_cmd *cmd = find_cmd(name);
	char prog[32];
	int ret;

	if (!cmd)
		return EXIT_FAILURE;
	snprintf(prog, sizeof(prog), "shiftctl %s", cmd->name);
	program_invocation_short_name = prog;
	program_invocation_name = prog;
	argv[0] = prog;
	optind = 0;	/* glibc: fully re-initialise getopt */
	ret = cmd->handler(cmd, argc, argv);
	fflush(stdout);
	program_invocation_short_name = saved_short;
	program_invocation_name = saved_name;
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help",    no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static char name[32];
	const struct sc_cmd *cmd;
	int c;

	/* "shiftctl: ..." whatever the binary is called; getopt uses argv[0] */
	program_invocation_short_name = (char *)"shiftctl";
	program_invocation_name = program_invocation_short_name;
	if (argc > 0)
		argv[0] = program_invocation_short_name;
	/* "+": stop at the command name, its options are its own */
	while ((c = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return EXIT_SUCCESS;
		case 'V':
			print_version();
			return EXIT_SUCCESS;
		default:
			return cmd_usage_error(NULL, NULL);
		}
	}
	if (optind >= argc)
		return cmd_usage_error(NULL, "no command given");
	cmd = find_cmd(argv[optind]);
	if (!cmd)
		return cmd_usage_error(NULL, "unknown command '%s'",
				       argv[optind]);
	argc -= optind;
	argv += optind;
	/* "shiftctl mount: ..." for the command's messages and getopt's */
	snprintf(name, sizeof(name), "shiftctl %s", cmd->name);
	program_invocation_short_name = name;
	program_invocation_name = name;
	argv[0] = name;
	optind = 0;	/* glibc: fully re-initialise getopt for the command */
	return cmd->handler(cmd, argc, argv);
}
