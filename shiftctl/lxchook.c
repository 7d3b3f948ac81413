// SPDX-License-Identifier: GPL-2.0
/*
 * The pure parts of shiftctl lxc-hook: see lxchook.h.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lxchook.h"

/* One include level deeper than this is a loop, as the shell hook said. */
#define LXCHOOK_INCLUDE_DEPTH 16

static const char *const type_names[] = {
	[LXCHOOK_PRE_START] = "pre-start",
	[LXCHOOK_PRE_MOUNT] = "pre-mount",
	[LXCHOOK_START_HOST] = "start-host",
	[LXCHOOK_POST_STOP] = "post-stop",
};

const char *lxchook_type_name(enum lxchook_type type)
{
	return type_names[type];
}

int lxchook_parse_type(const char *version, const char *env_type,
		       char *const *args, int nargs, enum lxchook_type *type,
		       char *err, size_t errsz)
{
	const char *name;
	size_t i;

	if (!version || !strcmp(version, "0")) {
		if (nargs < 3)
			return idmap_errf(err, errsz, -EINVAL,
				    "hook version 0 expects NAME SECTION TYPE arguments");
		name = args[2];
	} else if (!strcmp(version, "1")) {
		if (!env_type || !*env_type)
			return idmap_errf(err, errsz, -EINVAL,
				    "LXC_HOOK_TYPE is not set (hook version 1)");
		name = env_type;
	} else {
		return idmap_errf(err, errsz, -EINVAL, "unsupported hook version %s",
			    version);
	}
	for (i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++) {
		if (!strcmp(name, type_names[i])) {
			*type = (enum lxchook_type)i;
			return 0;
		}
	}
	return idmap_errf(err, errsz, -EINVAL,
		    "cannot run as a %s hook (only pre-start, pre-mount, start-host and post-stop)",
		    name);
}

void lxchook_rootfs_free(struct lxchook_rootfs *r)
{
	free(r->dir);
	free(r->lower);
	r->dir = r->lower = NULL;
}

/* "LOWER:UPPER", UPPER after the last ":/": r->lower, or a refusal. */
static int overlay_rootfs(const char *s, const char *path,
			  enum lxchook_type type, struct lxchook_rootfs *r,
			  char *err, size_t errsz)
{
	const char *upper = NULL, *p;
	size_t n;

	for (p = strstr(s, ":/"); p; p = strstr(p + 1, ":/"))
		upper = p;
	n = upper ? (size_t)(upper - s) : 0;
	if (!n) {
		if (type == LXCHOOK_POST_STOP)
			return 1;
		return idmap_errf(err, errsz, -EINVAL,
			    "rootfs %s: expected an overlay LOWER:UPPER", path);
	}
	r->lower = strndup(s, n);
	if (!r->lower)
		return idmap_errf(err, errsz, -ENOMEM, "out of memory");
	if (strstr(r->lower, ":/")) {
		lxchook_rootfs_free(r);
		if (type == LXCHOOK_POST_STOP)
			return 1;
		return idmap_errf(err, errsz, -EINVAL,
			    "rootfs %s: an overlay with several lower layers cannot be shifted (only one LOWER)",
			    path);
	}
	return 0;
}

int lxchook_parse_rootfs(const char *path, bool is_dir, enum lxchook_type type,
			 struct lxchook_rootfs *r, char *err, size_t errsz)
{
	const char *dir = path;

	r->dir = r->lower = NULL;
	if (!path || !*path)
		return idmap_errf(err, errsz, -EINVAL, "LXC_ROOTFS_PATH is not set");
	if (!strncmp(path, "dir:", 4)) {
		dir = path + 4;
	} else if (!strncmp(path, "overlay:", 8)) {
		return overlay_rootfs(path + 8, path, type, r, err, errsz);
	} else if (!strncmp(path, "overlayfs:", 10)) {
		return overlay_rootfs(path + 10, path, type, r, err, errsz);
	} else if (path[0] == '/' && strstr(path, ":/")) {
		/* liblxc strips the type: a directory, or LOWER:UPPER */
		if (!is_dir)
			return overlay_rootfs(path, path, type, r, err, errsz);
	} else if (strchr(path, ':')) {
		/* pre-start said so already; nothing of ours to clean up */
		if (type == LXCHOOK_POST_STOP)
			return 1;
		return idmap_errf(err, errsz, -EINVAL,
			    "rootfs %s: only directory (dir:) and overlay (overlay:LOWER:UPPER) rootfs can be shifted",
			    path);
	}
	r->dir = strdup(dir);
	if (!r->dir)
		return idmap_errf(err, errsz, -ENOMEM, "out of memory");
	return 0;
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

int lxchook_check_names(const char *name, const char *config, char *err,
			size_t errsz)
{
	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") ||
	    has_control(name))
		return idmap_errf(err, errsz, -EINVAL,
			    "container name '%s' cannot name a record: it holds a '/' or a control character, or is '.' or '..'",
			    name);
	(void)config;	/* any path: the record escapes its newlines */
	return 0;
}

char *lxchook_record_key(const char *name, const char *config)
{
	char *key, *p;

	if (asprintf(&key, "%s@%s", name, config ? config : "") < 0)
		return NULL;
	for (p = key + strlen(name) + 1; *p; p++)
		if (*p == '/')
			*p = '%';
	return key;
}

/* ---- maps ------------------------------------------------------------- */

static int cmp_extent(const void *a, const void *b)
{
	const struct idmap_extent *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

void lxchook_map_sort(struct idmap *map)
{
	qsort(map->ext, map->nr, sizeof(map->ext[0]), cmp_extent);
}

bool lxchook_map_equal(const struct idmap *a, const struct idmap *b)
{
	unsigned int i;

	if (a->nr != b->nr)
		return false;
	for (i = 0; i < a->nr; i++)
		if (a->ext[i].from != b->ext[i].from ||
		    a->ext[i].to != b->ext[i].to ||
		    a->ext[i].count != b->ext[i].count)
			return false;
	return true;
}

void lxchook_map_words(const struct idmap *map, char *buf, size_t size)
{
	size_t off = 0;
	unsigned int i;
	int n;

	if (!size)
		return;
	buf[0] = '\0';
	for (i = 0; i < map->nr && off < size; i++) {
		n = snprintf(buf + off, size - off, "%s%u:%u:%u", i ? " " : "",
			     map->ext[i].from, map->ext[i].to,
			     map->ext[i].count);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}

void lxchook_maps_text(const struct idmap *uid, const struct idmap *gid,
		       char *buf, size_t size)
{
	char u[512], g[512];

	lxchook_map_words(uid, u, sizeof(u));
	lxchook_map_words(gid, g, sizeof(g));
	snprintf(buf, size, "uids %s, gids %s", u, g);
}

/* Space-separated "F:T:C" words (a record's uids=/gids=) into map. */
static int map_words_parse(const char *s, struct idmap *map, enum idmap_kind kind,
			   char *err, size_t errsz)
{
	char word[64];
	size_t n;
	int ret;

	idmap_init(map);
	for (;;) {
		s += strspn(s, " \t");
		if (!*s)
			break;
		n = strcspn(s, " \t");
		if (n >= sizeof(word))
			return idmap_errf(err, errsz, -EINVAL, "%s '%.*s' is too long",
				    idmap_kind_name(kind), (int)n, s);
		memcpy(word, s, n);
		word[n] = '\0';
		ret = idmap_add_string(map, kind, word, err, errsz);
		if (ret)
			return ret;
		s += n;
	}
	lxchook_map_sort(map);
	return 0;
}

/* "u 0 100000 65536" (trimmed, non-empty) into uid or gid. */
static int idmap_value(const char *v, const char *what, struct idmap *uid,
		       struct idmap *gid, char *err, size_t errsz)
{
	char t[2], a[16], b[16], c[16], extra, ext[64];
	struct idmap *map;
	int ret;

	if (sscanf(v, "%1s %15s %15s %15s %c", t, a, b, c, &extra) != 4 ||
	    (strcmp(t, "u") && strcmp(t, "g")))
		return idmap_errf(err, errsz, -EINVAL,
			    "%s: lxc.idmap = %s: expected 'u|g INSIDE OUTSIDE COUNT'",
			    what, v);
	map = t[0] == 'u' ? uid : gid;
	snprintf(ext, sizeof(ext), "%s:%s:%s", a, b, c);
	ret = idmap_add_string(map, t[0] == 'u' ? IDMAP_UID : IDMAP_GID, ext,
			       err, errsz);
	if (ret) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		return idmap_errf(err, errsz, ret, "%s: lxc.idmap = %s: %s", what, v,
			    why);
	}
	return 0;
}

/* Trim blanks (and a final newline) in place. */
static char *trim(char *s)
{
	char *e;

	s += strspn(s, " \t\r\n");
	e = s + strlen(s);
	while (e > s && strchr(" \t\r\n", e[-1]))
		*--e = '\0';
	return s;
}

int lxchook_idmap_text(const char *text, const char *what, struct idmap *uid,
		       struct idmap *gid, char *err, size_t errsz)
{
	char *copy, *line, *save = NULL, *v;
	int ret = 0;

	idmap_init(uid);
	idmap_init(gid);
	copy = strdup(text);
	if (!copy)
		return idmap_errf(err, errsz, -ENOMEM, "out of memory");
	for (line = strtok_r(copy, "\n", &save); line && !ret;
	     line = strtok_r(NULL, "\n", &save)) {
		v = trim(line);
		if (!*v || !strncmp(v, "lxc.idmap", 9))
			continue;
		ret = idmap_value(v, what, uid, gid, err, errsz);
	}
	free(copy);
	lxchook_map_sort(uid);
	lxchook_map_sort(gid);
	return ret;
}

/* The lxc.idmap values seen so far, in order ("" after a clearing one). */
struct idmap_lines {
	char **v;
	size_t nr, alloc;
	size_t first;	/* lines before it were cleared */
};

static int lines_add(struct idmap_lines *l, const char *v)
{
	char **nv;

	if (!*v) {
		l->first = l->nr;
		return 0;
	}
	if (l->nr == l->alloc) {
		l->alloc = l->alloc ? l->alloc * 2 : 8;
		nv = realloc(l->v, l->alloc * sizeof(*l->v));
		if (!nv)
			return -ENOMEM;
		l->v = nv;
	}
	l->v[l->nr] = strdup(v);
	if (!l->v[l->nr])
		return -ENOMEM;
	l->nr++;
	return 0;
}

static int read_file(const char *path, char **text)
{
	FILE *f = fopen(path, "re");
	size_t len = 0, size = 4096, n;
	char *buf, *nbuf;

	if (!f)
		return -errno;
	buf = malloc(size);
	while (buf) {
		n = fread(buf + len, 1, size - len - 1, f);
		len += n;
		if (len + 1 < size)
			break;
		if (size >= (16u << 20)) {
			free(buf);
			fclose(f);
			return -EFBIG;
		}
		nbuf = realloc(buf, size *= 2);
		if (!nbuf)
			free(buf);
		buf = nbuf;
	}
	if (!buf || ferror(f)) {
		free(buf);
		fclose(f);
		return buf ? -EIO : -ENOMEM;
	}
	fclose(f);
	buf[len] = '\0';
	*text = buf;
	return 0;
}

static int config_file(const char *path, int depth, struct idmap_lines *l,
		       char *err, size_t errsz);

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* lxc.include of a directory: its *.conf regular files, in name order. */
static int config_dir(const char *dir, int depth, struct idmap_lines *l,
		      char *err, size_t errsz)
{
	char **names = NULL, **nn, *path;
	size_t nr = 0, i, len;
	struct dirent *de;
	struct stat st;
	int ret = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return idmap_errf(err, errsz, -errno, "cannot read lxc.include = %s: %s",
			    dir, strerror(errno));
	while ((de = readdir(d))) {
		len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".conf"))
			continue;
		nn = realloc(names, (nr + 1) * sizeof(*names));
		if (!nn || !(nn[nr] = strdup(de->d_name))) {
			names = nn ? nn : names;
			ret = idmap_errf(err, errsz, -ENOMEM, "out of memory");
			break;
		}
		names = nn;
		nr++;
	}
	closedir(d);
	if (!ret)
		qsort(names, nr, sizeof(*names), cmp_str);
	for (i = 0; i < nr; i++) {
		if (!ret) {
			if (asprintf(&path, "%s/%s", dir, names[i]) < 0) {
				ret = idmap_errf(err, errsz, -ENOMEM, "out of memory");
			} else {
				if (!stat(path, &st) && S_ISREG(st.st_mode))
					ret = config_file(path, depth, l, err,
							  errsz);
				free(path);
			}
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

static int config_file(const char *path, int depth, struct idmap_lines *l,
		       char *err, size_t errsz)
{
	char *text = NULL, *line, *save = NULL, *eq, *key, *v;
	struct stat st;
	int ret = 0;

	ret = read_file(path, &text);
	if (ret)
		return idmap_errf(err, errsz, ret, "cannot read %s: %s", path,
			    strerror(-ret));
	for (line = strtok_r(text, "\n", &save); line && !ret;
	     line = strtok_r(NULL, "\n", &save)) {
		key = line + strspn(line, " \t");
		if (*key == '#' || !(eq = strchr(key, '=')))
			continue;
		*eq = '\0';
		key = trim(key);
		v = trim(eq + 1);
		if (!strcmp(key, "lxc.idmap")) {
			if (lines_add(l, v))
				ret = idmap_errf(err, errsz, -ENOMEM, "out of memory");
		} else if (!strcmp(key, "lxc.include")) {
			if (depth + 1 >= LXCHOOK_INCLUDE_DEPTH)
				ret = idmap_errf(err, errsz, -ELOOP,
					   "%s: lxc.include nested too deep", path);
			else if (!stat(v, &st) && S_ISDIR(st.st_mode))
				ret = config_dir(v, depth + 1, l, err, errsz);
			else if (access(v, R_OK))
				ret = idmap_errf(err, errsz, -ENOENT,
					   "%s: cannot read lxc.include = %s",
					   path, v);
			else
				ret = config_file(v, depth + 1, l, err, errsz);
		}
	}
	free(text);
	return ret;
}

int lxchook_config_idmap(const char *path, struct idmap *uid,
			 struct idmap *gid, char *err, size_t errsz)
{
	struct idmap_lines l = { NULL, 0, 0, 0 };
	size_t i;
	int ret;

	idmap_init(uid);
	idmap_init(gid);
	ret = config_file(path, 0, &l, err, errsz);
	for (i = 0; i < l.nr; i++) {
		if (!ret && i >= l.first)
			ret = idmap_value(l.v[i], path, uid, gid, err, errsz);
		free(l.v[i]);
	}
	free(l.v);
	lxchook_map_sort(uid);
	lxchook_map_sort(gid);
	return ret;
}

/* ---- records ------------------------------------------------------------ */

int lxchook_stat_field(const char *stat, int field, unsigned long long *val)
{
	const char *p = strrchr(stat, ')');
	char *end;
	int i;

	/* after "pid (comm)" comes field 3 */
	if (!p || field < 3)
		return -EINVAL;
	p++;
	for (i = 3; i <= field; i++) {
		p += strspn(p, " ");
		if (!*p)
			return -EINVAL;
		if (i < field)
			p += strcspn(p, " ");
	}
	errno = 0;
	*val = strtoull(p, &end, 10);
	if (errno || end == p || (*end && *end != ' ' && *end != '\n'))
		return -EINVAL;
	return 0;
}

void lxchook_record_free(struct lxchook_record *r)
{
	free(r->name);
	free(r->config);
	free(r->rootfs);
	r->name = r->config = r->rootfs = NULL;
}

/* "\" and newline escaped, appended to *buf at *off (a growing buffer). */
static int put(char **buf, size_t *size, size_t *off, const char *key,
	       const char *val)
{
	size_t need = strlen(key) + 2 + 2 * strlen(val) + 1;
	char *nb, *p;

	if (*off + need >= *size) {
		*size = (*off + need) * 2;
		nb = realloc(*buf, *size);
		if (!nb)
			return -ENOMEM;
		*buf = nb;
	}
	p = *buf + *off;
	p += sprintf(p, "%s=", key);
	for (; *val; val++) {
		if (*val == '\\' || *val == '\n') {
			*p++ = '\\';
			*p++ = *val == '\n' ? 'n' : '\\';
		} else {
			*p++ = *val;
		}
	}
	*p++ = '\n';
	*p = '\0';
	*off = (size_t)(p - *buf);
	return 0;
}

char *lxchook_record_format(const struct lxchook_record *r)
{
	char words[4096], proc[64];
	size_t size = 0, off = 0;
	char *buf = NULL;
	int ret;

	ret = put(&buf, &size, &off, "name", r->name ? r->name : "");
	if (!ret)
		ret = put(&buf, &size, &off, "config", r->config ? r->config : "");
	if (!ret)
		ret = put(&buf, &size, &off, "rootfs", r->rootfs ? r->rootfs : "");
	lxchook_map_words(&r->uid, words, sizeof(words));
	if (!ret)
		ret = put(&buf, &size, &off, "uids", words);
	lxchook_map_words(&r->gid, words, sizeof(words));
	if (!ret)
		ret = put(&buf, &size, &off, "gids", words);
	snprintf(proc, sizeof(proc), "%d %llu", (int)r->owner.pid,
		 r->owner.start);
	if (!ret)
		ret = put(&buf, &size, &off, "owner", proc);
	if (!ret && r->init.pid) {
		snprintf(proc, sizeof(proc), "%d %llu", (int)r->init.pid,
			 r->init.start);
		ret = put(&buf, &size, &off, "init", proc);
	}
	if (!ret && r->phase != LXCHOOK_PHASE_NONE)
		ret = put(&buf, &size, &off, "phase",
			  r->phase == LXCHOOK_PHASE_MARKED ? "marked" : "running");
	if (ret) {
		free(buf);
		return NULL;
	}
	return buf;
}

static char *unescape(const char *s)
{
	char *out = malloc(strlen(s) + 1), *p = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (*s == '\\' && (s[1] == 'n' || s[1] == '\\')) {
			*p++ = s[1] == 'n' ? '\n' : '\\';
			s++;
		} else {
			*p++ = *s;
		}
	}
	*p = '\0';
	return out;
}

/* "PID START" (shell records: "PID START" too; missing: none). */
static int proc_parse(const char *v, struct lxchook_proc *p)
{
	long long pid;
	unsigned long long start;
	char extra;

	if (sscanf(v, "%lld %llu %c", &pid, &start, &extra) != 2 || pid < 0 ||
	    pid > 0x3fffffff)
		return -EINVAL;
	p->pid = (pid_t)pid;
	p->start = start;
	return 0;
}

int lxchook_record_parse(const char *text, struct lxchook_record *r,
			 char *err, size_t errsz)
{
	char *copy, *line, *save = NULL, *eq, **str, *v;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	copy = strdup(text);
	if (!copy)
		return idmap_errf(err, errsz, -ENOMEM, "out of memory");
	for (line = strtok_r(copy, "\n", &save); line && !ret;
	     line = strtok_r(NULL, "\n", &save)) {
		eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq = '\0';
		v = unescape(eq + 1);
		if (!v) {
			ret = idmap_errf(err, errsz, -ENOMEM, "out of memory");
			break;
		}
		str = !strcmp(line, "name") ? &r->name :
		      !strcmp(line, "config") ? &r->config :
		      !strcmp(line, "rootfs") ? &r->rootfs : NULL;
		if (str) {
			free(*str);
			*str = v;
			continue;
		}
		if (!strcmp(line, "uids"))
			ret = map_words_parse(v, &r->uid, IDMAP_UID, err, errsz);
		else if (!strcmp(line, "gids"))
			ret = map_words_parse(v, &r->gid, IDMAP_GID, err, errsz);
		else if (!strcmp(line, "owner") && proc_parse(v, &r->owner))
			ret = idmap_errf(err, errsz, -EINVAL, "owner=%s: expected PID START", v);
		else if (!strcmp(line, "init") && proc_parse(v, &r->init))
			ret = idmap_errf(err, errsz, -EINVAL, "init=%s: expected PID START", v);
		else if (!strcmp(line, "phase"))
			r->phase = !strcmp(v, "marked") ? LXCHOOK_PHASE_MARKED :
				   !strcmp(v, "running") ? LXCHOOK_PHASE_RUNNING :
				   LXCHOOK_PHASE_NONE;
		free(v);
	}
	free(copy);
	if (!ret && (!r->name || !r->rootfs))
		ret = idmap_errf(err, errsz, -EINVAL, "no %s= line",
			   r->name ? "rootfs" : "name");
	if (ret)
		lxchook_record_free(r);
	return ret;
}

/* ---- decisions --------------------------------------------------------- */

static bool same_rootfs(const struct lxchook_record *r, const char *rootfs)
{
	return r && r->rootfs && !strcmp(r->rootfs, rootfs);
}

static bool same_maps(const struct lxchook_record *r, const struct idmap *uid,
		      const struct idmap *gid)
{
	return lxchook_map_equal(&r->uid, uid) && lxchook_map_equal(&r->gid, gid);
}

int lxchook_decide_pre_start(struct lxchook_pre_start *ps,
			     struct lxchook_peer *peers, size_t npeers,
			     const struct lxchook_mark *mark, const char *cmd,
			     char *err, size_t errsz)
{
	char have[1100], want[1100];
	bool mine = false;
	size_t i;

	ps->shared = NULL;
	ps->action = LXCHOOK_MARK_NEW;
	/*
	 * Who else uses this rootfs: a record whose start is gone is stale
	 * (ours from an earlier start included); a live one with other maps
	 * is a conflict; a live one with the same maps that is still
	 * starting holds a mark we may share.
	 */
	for (i = 0; i < npeers; i++) {
		const struct lxchook_record *r = peers[i].rec;

		peers[i].remove = peers[i].ours || !peers[i].alive || !r;
		if (peers[i].remove) {
			/* a stale record of ours explains a mark */
			if (same_rootfs(r, ps->rootfs) && mark->present &&
			    lxchook_map_equal(&r->uid, &mark->uid) &&
			    lxchook_map_equal(&r->gid, &mark->gid))
				mine = true;
			continue;
		}
		if (!same_rootfs(r, ps->rootfs))
			continue;
		if (!same_maps(r, ps->uid, ps->gid)) {
			lxchook_maps_text(&r->uid, &r->gid, have, sizeof(have));
			lxchook_maps_text(ps->uid, ps->gid, want, sizeof(want));
			return idmap_errf(err, errsz, -EBUSY,
				    "%s is in use by %s (%s), %s wants other maps (%s): a rootfs is shifted for one set of maps at a time; stop %s first",
				    ps->rootfs, r->name, have, ps->name, want,
				    r->name);
		}
		if (r->phase == LXCHOOK_PHASE_MARKED)
			ps->shared = r->name;
	}
	if (!mark->present)
		return 0;
	lxchook_maps_text(&mark->uid, &mark->gid, have, sizeof(have));
	if (ps->shared) {
		if (!lxchook_map_equal(&mark->uid, ps->uid) ||
		    !lxchook_map_equal(&mark->gid, ps->gid)) {
			lxchook_maps_text(ps->uid, ps->gid, want, sizeof(want));
			return idmap_errf(err, errsz, -EBUSY,
				    "%s carries a mark for %s while %s starts with %s",
				    ps->rootfs, have, ps->shared, want);
		}
		ps->action = LXCHOOK_MARK_SHARE;
		return 0;
	}
	/*
	 * Nobody alive needs this mark: left by a start that never
	 * finished.  Replace it if it holds our maps, one of the hook's own
	 * stale records made it, or it is in the hook's own directory.
	 */
	if (lxchook_map_equal(&mark->uid, ps->uid) &&
	    lxchook_map_equal(&mark->gid, ps->gid))
		mine = true;
	if (!mine && !ps->lower)
		return idmap_errf(err, errsz, -EBUSY,
			    "%s carries a shiftfs mark (%s) that no container started by this hook holds; if it is stale, drop it with: %s unmark %s",
			    ps->rootfs, have, cmd, ps->rootfs);
	ps->action = LXCHOOK_MARK_REPLACE;
	return 0;
}

const char *lxchook_marking_peer(const struct lxchook_peer *peers,
				 size_t npeers, const char *rootfs)
{
	size_t i;

	for (i = 0; i < npeers; i++)
		if (!peers[i].ours && peers[i].alive &&
		    same_rootfs(peers[i].rec, rootfs) &&
		    peers[i].rec->phase == LXCHOOK_PHASE_MARKED)
			return peers[i].rec->name;
	return NULL;
}

enum lxchook_post_stop lxchook_decide_post_stop(const struct lxchook_record *rec,
						const struct lxchook_mark *mark,
						const char *peer)
{
	/* only a start that failed between pre-start and start-host */
	if (!rec || rec->phase != LXCHOOK_PHASE_MARKED || !mark->present ||
	    !same_maps(rec, &mark->uid, &mark->gid))
		return LXCHOOK_POST_STOP_NOTHING;
	return peer ? LXCHOOK_POST_STOP_KEEP : LXCHOOK_POST_STOP_UNMARK;
}
