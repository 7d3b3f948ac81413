// SPDX-License-Identifier: GPL-2.0
/*
 * JSON string escaping and id-map output for shiftctl --json.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
static int utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	uint32_t cp;
	int n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong, surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

void json_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int n;

	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*s) {
		switch (*s) {
		case '"':  fputs("\\\"", f); s++; continue;
		case '\\': fputs("\\\\", f); s++; continue;
		case '\b': fputs("\\b", f); s++; continue;
		case '\f': fputs("\\f", f); s++; continue;
		case '\n': fputs("\\n", f); s++; continue;
		case '\r': fputs("\\r", f); s++; continue;
		case '\t': fputs("\\t", f); s++; continue;
		}
		if (*s < 0x20 || *s == 0x7f) {
			fprintf(f, "\\u%04x", *s);
			s++;
			continue;
		}
		n = utf8_len(s);
		if (!n) {
			fputs("\\ufffd", f);
			s++;
			continue;
		}
		fwrite(s, 1, (size_t)n, f);
		s += n;
	}
	fputc('"', f);
}

void json_idmap(FILE *f, const struct idmap *map)
{
	unsigned int i;

	fputc('[', f);
	for (i = 0; i < map->nr; i++)
		fprintf(f, "%s{\"from\":%u,\"to\":%u,\"count\":%u}",
			i ? "," : "", map->ext[i].from, map->ext[i].to,
			map->ext[i].count);
	fputc(']', f);
}

char *utf8_sanitize(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	char *out, *o;
	int n;

	/* each invalid byte grows to 3 (U+FFFD) */
	out = malloc(strlen(str) * 3 + 1);
	if (!out)
		return NULL;
	for (o = out; *s; ) {
		n = utf8_len(s);
		if (n) {
			memcpy(o, s, (size_t)n);
			o += n;
			s += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			s++;
		}
	}
	*o = '\0';
	return out;
}
