/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shiftctl: shared declarations of the command files.
 */
#ifndef SHIFTCTL_H
#define SHIFTCTL_H

#include <err.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "idmap.h"
#include "mntattr.h"

#define EXIT_USAGE 2

#ifndef SHIFTCTL_VERSION
#define SHIFTCTL_VERSION "unknown"
#endif

/* Every fd starts at -EBADF and is closed in one place: its scope's end. */
static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -EBADF;
}

static inline void freep(void *p)
{
	free(*(void **)p);
}

#define _cleanup_close_ __attribute__((cleanup(closep)))
#define _cleanup_free_ __attribute__((cleanup(freep)))

struct sc_cmd {
	const char *name;
	int (*handler)(const struct sc_cmd *cmd, int argc, char **argv);
	const char *args;	/* synopsis after the command name */
	const char *help;	/* one line for shiftctl --help */
	const char *options;	/* aligned option lines, -h/-V added */
	const char *notes;	/* paragraphs after the options, or NULL */
	void (*more_help)(FILE *out);	/* e.g. the output columns, or NULL */
};

/*
 * Messages go through <err.h>: "shiftctl CMD: what: why" (main() sets
 * program_invocation_short_name).  warnc() is BSD's warn() with an error
 * number of the caller's; glibc lacks it.
 */
#define warnc(errnum, ...) (errno = (errnum), warn(__VA_ARGS__))

/* shiftctl.c */
void cmd_usage(const struct sc_cmd *cmd, FILE *out);
int cmd_usage_error(const struct sc_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "shiftctl CMD: debug: ..." on stderr when $SHIFTCTL_DEBUG is set */
void sc_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void print_version(void);
int read_text(const char *path, char **text);
/* CAP_SYS_ADMIN in our user namespace, or say so (hint: how to get it) */
int need_cap_sys_admin(const char *hint);
/* CAP_SYS_ADMIN in the initial user namespace, or say so */
int need_privileges(void);
bool all_digits(const char *s);
/* getopt's -h, -V and errors, common to every command: the exit status */
int common_option(const struct sc_cmd *cmd, int c);
/* -h and -V only: -1 to go on, else the exit status */
int plain_options(const struct sc_cmd *cmd, int argc, char **argv);
/* path is a directory, or say what it is not (why: " (...)" or "") */
int check_dir(const char *path, const char *why);
bool in_user_namespace(void);
/* another command, as "shiftctl NAME ARGS..." runs it: its exit status */
int run_command(const char *name, int argc, char **argv);

/* container.c */
int container_resolve(const char *name, pid_t *pid);
int pid_maps(pid_t pid, bool allow_identity, struct idmap *uid,
	     struct idmap *gid);

/*
 * Where mount's and mark's maps come from: -u/--uidmap and -g/--gidmap,
 * or the user namespace of -p/--pid or -c/--container.
 */
struct map_source {
	struct idmap uid;
	struct idmap gid;
	const char *pid;	/* --pid, or NULL */
	const char *container;	/* --container, or NULL */
};

void map_source_init(struct map_source *ms);
/* getopt's @c: -1 if not a map option, 0 if taken, else the exit status */
int map_source_option(const struct sc_cmd *cmd, struct map_source *ms,
		      int c, const char *arg);
/* --pid with --container, or maps with either: the exit status; else 0 */
int map_source_check(const struct sc_cmd *cmd, const struct map_source *ms);
/* true if --pid or --container was given */
bool map_source_from_process(const struct map_source *ms);
/* For --pid/--container, read the process's maps into ms->uid/gid. */
int map_source_resolve(struct map_source *ms, bool allow_identity);

/* mnt.c */
struct shift_opts {
	const struct idmap *uid;
	const struct idmap *gid;
	enum shift_kind kind;	/* SHIFT_MARK: a mark (directories only) */
	bool ro;
	bool suid;	/* --suid: do not add nosuid (mntattr.h) */
};

int shift_build(const char *src, const struct shift_opts *opts);

/* The top mount on a mount point, as a mountinfo table shows it. */
struct top_mount {
	char fstype[32];
	bool mark;	/* a shiftfs mark */
	struct idmap uid, gid;	/* its maps, when a shiftfs mount */
};

/* -ENOENT if target is not a mount point; mountinfo NULL: our own */
int find_top_mount(FILE *mountinfo, const char *target, struct top_mount *top);

/* End the mark that is the top mount on dir, in every mount namespace. */
int revoke_mark(const char *dir, const char *shown);

/* cmd_mount.c */
int cmd_mount(const struct sc_cmd *cmd, int argc, char **argv);
int cmd_umount(const struct sc_cmd *cmd, int argc, char **argv);
int cmd_unmark(const struct sc_cmd *cmd, int argc, char **argv);
/* revoke and unmount the mark on abs: 0 or -errno (said) */
int unmark_dir(const char *abs, const char *shown);
int cmd_attach(const struct sc_cmd *cmd, int argc, char **argv);
int cmd_detach(const struct sc_cmd *cmd, int argc, char **argv);

/* cmd_info.c */
int cmd_maps(const struct sc_cmd *cmd, int argc, char **argv);
int cmd_check(const struct sc_cmd *cmd, int argc, char **argv);

/* cmd_lxchook.c */
int cmd_lxchook(const struct sc_cmd *cmd, int argc, char **argv);

/* cmd_list.c */
int cmd_list(const struct sc_cmd *cmd, int argc, char **argv);
void list_columns_help(FILE *out);

/* cmd_mark.c */
int cmd_mark(const struct sc_cmd *cmd, int argc, char **argv);
int mark_dir_fd(const char *path, int dfd, const struct idmap *uid,
		const struct idmap *gid);

/* cmd_decl.c: declared marks (decl.h) and marks made for a user */
int user_maps(const char *user, bool own_ids, struct idmap *uid,
	      struct idmap *gid);
int mark_declare(const char *dir, const char *user, bool own_ids,
		 const struct idmap *uid, const struct idmap *gid);
int mark_declared_all(void);
int unmark_declared_all(void);
/* dir's declaration dropped, if it has one: 0, or -errno (said) */
int undeclare(const char *dir);
/* the user a mark with map uid serves, from /etc/subuid, into buf */
int mark_user(const struct idmap *uid, char *buf, size_t size);
int mount_from_mark(const char *src, const char *dst, bool ro);

#endif /* SHIFTCTL_H */
