// SPDX-License-Identifier: GPL-2.0
/*
 * Temporary lower-mount directory names (see source.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "source.h"

#define PREFIX "shiftctl-"
#define SUFFIX_LEN 7	/* ".XXXXXX" */

/* A kernel block device name: letters, digits, '-', '_' (loop0, nvme0n1p2). */
static bool valid_dev(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 32)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
	}
	return true;
}

int source_tmpdir_template(char *buf, size_t size, const char *dir,
			   const char *dev)
{
	const char *base = strrchr(dev, '/');
	int n;

	base = base ? base + 1 : dev;
	if (!valid_dev(base, strlen(base)))
		return -EINVAL;
	n = snprintf(buf, size, "%s/" PREFIX "%s.XXXXXX", dir, base);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

int source_tmpdir_dev(const char *source, char *dev, size_t size)
{
	const char *base = strrchr(source, '/');
	size_t len;

	if (!base)
		return -EINVAL;
	base++;
	if (strncmp(base, PREFIX, strlen(PREFIX)))
		return -EINVAL;
	base += strlen(PREFIX);
	len = strlen(base);
	if (len <= SUFFIX_LEN || base[len - SUFFIX_LEN] != '.')
		return -EINVAL;
	len -= SUFFIX_LEN;
	if (!valid_dev(base, len) || len >= size)
		return -EINVAL;
	memcpy(dev, base, len);
	dev[len] = '\0';
	return 0;
}
