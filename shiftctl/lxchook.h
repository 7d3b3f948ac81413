/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pure parts of shiftctl lxc-hook (cmd_lxchook.c): what LXC hands a
 * hook (version, type, rootfs), the container's effective lxc.idmap from
 * its config and what that includes, the per-container record and its
 * text, and what each hook type decides from the records and the mark it
 * finds.  No mounts, no processes: the host unit tests link this file
 * (the config reader opens the files it is given, nothing else).
 *
 * Functions that can refuse their input write one line naming it to
 * (err, errsz) and return a negative errno; 0 is success.
 */
#ifndef SHIFTCTL_LXCHOOK_H
#define SHIFTCTL_LXCHOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "idmap.h"

enum lxchook_type {
	LXCHOOK_PRE_START,
	LXCHOOK_PRE_MOUNT,
	LXCHOOK_START_HOST,
	LXCHOOK_POST_STOP,
};

/*
 * The hook type: hook version 0 passes NAME SECTION TYPE as arguments
 * (args, nargs), version 1 LXC_HOOK_TYPE (env_type).  version is
 * LXC_HOOK_VERSION (NULL: 0).
 */
int lxchook_parse_type(const char *version, const char *env_type,
		       char *const *args, int nargs, enum lxchook_type *type,
		       char *err, size_t errsz);
const char *lxchook_type_name(enum lxchook_type type);

/* What is shifted: the rootfs directory, or an overlay's LOWER. */
struct lxchook_rootfs {
	char *dir;	/* a directory rootfs, or NULL */
	char *lower;	/* an overlay's single lower layer, or NULL */
};

/*
 * LXC_ROOTFS_PATH as liblxc gives it to hooks ("dir:" or "overlay:"
 * prefix, or none; an overlay's UPPER follows the last ":/").  is_dir:
 * the whole of path is a directory (a directory whose name holds ":/").
 * Returns 0, 1 when a post-stop hook has nothing of ours to clean up
 * (a rootfs pre-start refused), or -EINVAL.  Free with lxchook_rootfs_free().
 */
int lxchook_parse_rootfs(const char *path, bool is_dir, enum lxchook_type type,
			 struct lxchook_rootfs *r, char *err, size_t errsz);
void lxchook_rootfs_free(struct lxchook_rootfs *r);

/* "NAME@CONFIG-PATH", every "/" written "%": a record's file name stem. */
/*
 * The container's name names its record and, for an overlay, its bind
 * under the state directory: a name with a '/', "." or "..", or a control
 * character would lead out of the directory or forge a name.  The config
 * path may be any path (the record escapes it).  0, or -EINVAL with the
 * reason in err.
 */
int lxchook_check_names(const char *name, const char *config, char *err,
			size_t errsz);
char *lxchook_record_key(const char *name, const char *config);

/*
 * lxc.idmap values, one "u 0 100000 65536" a line (lxc-info's answer):
 * into uid/gid, each sorted.  Empty lines and "lxc.idmap =" are skipped.
 */
int lxchook_idmap_text(const char *text, const char *what, struct idmap *uid,
		       struct idmap *gid, char *err, size_t errsz);

/*
 * The effective lxc.idmap of config file path as liblxc reads it: lines
 * of included files (lxc.include of a file, or of a directory's *.conf
 * files, in name order) count where they are included, and an empty
 * "lxc.idmap =" clears what came before.  Sorted.
 */
int lxchook_config_idmap(const char *path, struct idmap *uid,
			 struct idmap *gid, char *err, size_t errsz);

/* Extents sorted by FROM (the order maps are compared and shown in). */
void lxchook_map_sort(struct idmap *map);
bool lxchook_map_equal(const struct idmap *a, const struct idmap *b);
/* "0:100000:65536 1000:1000:1" into buf (always terminated) */
void lxchook_map_words(const struct idmap *map, char *buf, size_t size);
/* "uids 0:100000:65536, gids 0:100000:65536" into buf */
void lxchook_maps_text(const struct idmap *uid, const struct idmap *gid,
		       char *buf, size_t size);

/* A process named by pid and start time (clock ticks after boot). */
struct lxchook_proc {
	pid_t pid;		/* 0: none */
	unsigned long long start;
};

/* Field 22 of /proc/PID/stat text (its comm may hold ")" and spaces). */
int lxchook_stat_field(const char *stat, int field, unsigned long long *val);

enum lxchook_phase {
	LXCHOOK_PHASE_NONE,	/* no phase= line */
	LXCHOOK_PHASE_MARKED,	/* pre-start marked; start-host not reached */
	LXCHOOK_PHASE_RUNNING,	/* start-host ran */
};

/*
 * One container's record, $STATE/KEY.rec: "key=value" lines, values with
 * "\" and newline written "\\" and "\n" (so that any path fits on one
 * line; records of the shell hook read the same).
 */
struct lxchook_record {
	char *name;
	char *config;
	char *rootfs;
	struct idmap uid;
	struct idmap gid;
	struct lxchook_proc owner;	/* the liblxc process running the start */
	struct lxchook_proc init;	/* the container's init (start-host) */
	enum lxchook_phase phase;
};

void lxchook_record_free(struct lxchook_record *r);
/* malloc()ed text, NULL when out of memory */
char *lxchook_record_format(const struct lxchook_record *r);
int lxchook_record_parse(const char *text, struct lxchook_record *r,
			 char *err, size_t errsz);

/* What pre-start, start-host and post-stop see of the other records. */
struct lxchook_peer {
	const struct lxchook_record *rec;	/* NULL: unreadable */
	bool ours;		/* this container's own record */
	bool alive;		/* its start or its container still runs */
	bool remove;		/* (out) stale: pre-start removes it */
};

/* The top mount on what is marked, as far as the hook cares. */
struct lxchook_mark {
	bool present;		/* a shiftfs mark is the top mount there */
	struct idmap uid;
	struct idmap gid;
};

enum lxchook_mark_action {
	LXCHOOK_MARK_NEW,	/* no mark: make one */
	LXCHOOK_MARK_SHARE,	/* a live start with our maps holds it */
	LXCHOOK_MARK_REPLACE,	/* stale: unmark, then mark */
};

struct lxchook_pre_start {
	/* in */
	const char *name;
	const char *rootfs;	/* what is marked */
	bool lower;		/* an overlay's LOWER: the mark is ours */
	const struct idmap *uid, *gid;
	/* out */
	const char *shared;	/* the peer whose mark we share, or NULL */
	enum lxchook_mark_action action;
};

/*
 * pre-start's decision: sets peers[i].remove for stale records (ours, or
 * whose start is gone); refuses a live peer on the same rootfs with other
 * maps, a mark that disagrees with a peer we would share it with, and a
 * mark no record of ours explains.  err names who and what.
 */
int lxchook_decide_pre_start(struct lxchook_pre_start *ps,
			     struct lxchook_peer *peers, size_t npeers,
			     const struct lxchook_mark *mark, const char *cmd,
			     char *err, size_t errsz);

/* A live peer on rootfs, other than ours, still in phase marked: its name */
const char *lxchook_marking_peer(const struct lxchook_peer *peers,
				 size_t npeers, const char *rootfs);

enum lxchook_post_stop {
	LXCHOOK_POST_STOP_NOTHING,	/* no mark of this start to drop */
	LXCHOOK_POST_STOP_KEEP,		/* a peer's start still needs it */
	LXCHOOK_POST_STOP_UNMARK,
};

/* post-stop of a directory rootfs, with the record it removes */
enum lxchook_post_stop lxchook_decide_post_stop(const struct lxchook_record *rec,
						const struct lxchook_mark *mark,
						const char *peer);

#endif /* SHIFTCTL_LXCHOOK_H */
