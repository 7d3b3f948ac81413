// SPDX-License-Identifier: GPL-2.0
/*
 * Declared marks: the file's lines (decl.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decl.h"

int decl_check_path(const char *path, char *err, size_t errsz)
{
	const char *p, *c;
	size_t n;

	if (path[0] != '/')
		return idmap_errf(err, errsz, -EINVAL,
				  "'%s' is not an absolute path", path);
	if (!path[1])
		return idmap_errf(err, errsz, -EINVAL, "'/' cannot be marked");
	if (strlen(path) >= PATH_MAX)
		return idmap_errf(err, errsz, -ENAMETOOLONG, "'%.64s...' is too long",
				  path);
	for (p = path + 1;; p = c + 1) {
		c = strchrnul(p, '/');
		n = (size_t)(c - p);
		if (!n || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return idmap_errf(err, errsz, -EINVAL,
					  "'%s' is not canonical (an empty, '.' or '..' component, or a trailing '/'): declare the directory's own path",
					  path);
		if (!*c)
			return 0;
	}
}

/* fstab's escapes: \040 (blank), \011 (tab), \012 (newline), \134 (\). */
static int unescape(const char *s, size_t len, char *out, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c == '\\') {
			if (i + 3 >= len)
				return -EINVAL;
			if (s[i + 1] < '0' || s[i + 1] > '3' ||
			    s[i + 2] < '0' || s[i + 2] > '7' ||
			    s[i + 3] < '0' || s[i + 3] > '7')
				return -EINVAL;
			c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 +
				   (s[i + 3] - '0'));
			if (!c)
				return -EINVAL;
			i += 3;
		}
		if (o + 1 >= size)
			return -ENAMETOOLONG;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Comma separated OPTIONS of a line into d. */
static int parse_options(const char *s, size_t len, struct decl *d,
			 char *err, size_t errsz)
{
	char opt[256], why[256];
	const char *p = s, *c, *end = s + len;
	size_t n;
	int ret;

	while (p < end) {
		c = memchr(p, ',', (size_t)(end - p));
		if (!c)
			c = end;
		n = (size_t)(c - p);
		if (!n || n >= sizeof(opt))
			return idmap_errf(err, errsz, -EINVAL,
					  "option '%.*s': empty or too long", (int)n, p);
		memcpy(opt, p, n);
		opt[n] = '\0';
		if (!strncmp(opt, "user=", 5)) {
			if (!opt[5] || strlen(opt + 5) >= sizeof(d->user) ||
			    strpbrk(opt + 5, ":/"))
				return idmap_errf(err, errsz, -EINVAL,
						  "option '%s': not a user name", opt);
			strcpy(d->user, opt + 5);
		} else if (!strcmp(opt, "own-ids")) {
			d->own_ids = true;
		} else if (!strncmp(opt, "uidmap=", 7) || !strncmp(opt, "gidmap=", 7)) {
			bool u = opt[0] == 'u';

			ret = idmap_add_string(u ? &d->uid : &d->gid,
					       u ? IDMAP_UID : IDMAP_GID,
					       opt + 7, why, sizeof(why));
			if (ret)
				return idmap_errf(err, errsz, ret, "%s", why);
		} else {
			return idmap_errf(err, errsz, -EINVAL,
					  "unknown option '%s' (user=NAME, own-ids, uidmap=F:T:C, gidmap=F:T:C)",
					  opt);
		}
		p = c + 1;
	}
	if (d->user[0] && (d->uid.nr || d->gid.nr))
		return idmap_errf(err, errsz, -EINVAL,
				  "user= and uidmap=/gidmap= exclude each other");
	if (!d->user[0] && d->own_ids)
		return idmap_errf(err, errsz, -EINVAL, "own-ids goes with user=NAME");
	if (!d->user[0] && (!d->uid.nr || !d->gid.nr))
		return idmap_errf(err, errsz, -EINVAL,
				  "no maps: user=NAME, or both uidmap= and gidmap=");
	return 0;
}

int decl_parse_line(const char *line, struct decl *d, char *err,
		    size_t errsz)
{
	const char *p = line, *f;
	char why[512];
	size_t n;
	int ret;

	memset(d, 0, sizeof(*d));
	idmap_init(&d->uid);
	idmap_init(&d->gid);
	while (blank(*p))
		p++;
	if (!*p || *p == '#' || *p == '\n')
		return 1;
	for (f = p; *f && !blank(*f) && *f != '\n'; f++)
		;
	if (unescape(p, (size_t)(f - p), d->path, sizeof(d->path)))
		return idmap_errf(err, errsz, -EINVAL,
				  "'%.*s': a bad escape or too long", (int)(f - p), p);
	ret = decl_check_path(d->path, why, sizeof(why));
	if (ret)
		return idmap_errf(err, errsz, ret, "%s", why);
	while (blank(*f))
		f++;
	for (n = 0; f[n] && !blank(f[n]) && f[n] != '\n'; n++)
		;
	if (!n)
		return idmap_errf(err, errsz, -EINVAL, "%s: no OPTIONS", d->path);
	for (p = f + n; blank(*p); p++)
		;
	if (*p && *p != '\n' && *p != '#')
		return idmap_errf(err, errsz, -EINVAL,
				  "%s: more than DIR and OPTIONS: '%s'", d->path, p);
	ret = parse_options(f, n, d, why, sizeof(why));
	if (ret)
		return idmap_errf(err, errsz, ret, "%s: %s", d->path, why);
	return 0;
}

char *decl_format(const struct decl *d)
{
	char path[4 * PATH_MAX], *line = NULL, *maps = NULL;
	const char *s;
	size_t o = 0;
	int ret;

	for (s = d->path; *s && o + 5 < sizeof(path); s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
			o += (size_t)snprintf(path + o, sizeof(path) - o, "\\%03o",
					      (unsigned char)*s);
		else
			path[o++] = *s;
	}
	path[o] = '\0';
	if (d->user[0]) {
		ret = asprintf(&line, "%s\tuser=%s%s", path, d->user,
			       d->own_ids ? ",own-ids" : "");
	} else {
		maps = idmap_format_options(&d->uid, &d->gid);
		if (!maps)
			return NULL;
		ret = asprintf(&line, "%s\t%s", path, maps);
		free(maps);
	}
	return ret < 0 ? NULL : line;
}

char *decl_replace(const char *text, const char *path, const char *line,
		   bool *found)
{
	size_t size = strlen(text) + (line ? strlen(line) : 0) + 2, o = 0;
	char *out = malloc(size), err[8];
	const char *p = text, *nl;
	struct decl *d = malloc(sizeof(*d));
	size_t len;

	*found = false;
	if (!out || !d) {
		free(out);
		free(d);
		return NULL;
	}
	while (*p) {
		nl = strchr(p, '\n');
		len = nl ? (size_t)(nl - p) : strlen(p);
		char *copy = strndup(p, len);

		if (!copy) {
			free(out);
			free(d);
			return NULL;
		}
		if (!decl_parse_line(copy, d, err, sizeof(err)) &&
		    !strcmp(d->path, path)) {
			if (line && !*found) {
				o += (size_t)sprintf(out + o, "%s\n", line);
				line = NULL;
			}
			*found = true;
		} else {
			memcpy(out + o, p, len);
			o += len;
			out[o++] = '\n';
		}
		free(copy);
		p = nl ? nl + 1 : p + len;
	}
	if (line)
		o += (size_t)sprintf(out + o, "%s\n", line);
	out[o] = '\0';
	free(d);
	return out;
}
