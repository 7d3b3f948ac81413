/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal JSON output helpers for shiftctl's --json (pure, unit tested).
 */
#ifndef SHIFTCTL_JSON_H
#define SHIFTCTL_JSON_H

#include <stdio.h>

#include "idmap.h"

/*
 * Write s as a quoted JSON string: ", \ and control characters escaped,
 * valid UTF-8 passed through, each invalid byte replaced by U+FFFD so the
 * output is always valid JSON whatever bytes a path holds.  NULL -> null.
 */
void json_string(FILE *f, const char *s);

/*
 * A malloc()ed copy of s with each byte that is not part of valid UTF-8
 * replaced by U+FFFD, for libsmartcols' JSON (which passes bytes through).
 */
char *utf8_sanitize(const char *s);

/* [{"from":F,"to":T,"count":C},...] */
void json_idmap(FILE *f, const struct idmap *map);

#endif /* SHIFTCTL_JSON_H */
