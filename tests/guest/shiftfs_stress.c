// SPDX-License-Identifier: GPL-2.0
/*
 * Concurrency: processes creating, writing, renaming, listing, stat()ing
 * and removing through the mount while others change the same tree
 * underneath.  Errors from the races themselves are expected (ENOENT,
 * ESTALE, EEXIST...); what must not happen is a kernel warning (the runner
 * scans the log), a hang, or a mount that can't be unmounted afterwards.
 */
#define HARNESS_TIMEOUT 120
#include "harness.h"
#include "shiftfs_util.h"

#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>

#define STRESS_SECONDS 8
#define NAMES 16

static void churn(const char *dir, unsigned int seed, int through)
{
	char a[512], b[512], buf[64];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd;

	if (through)
		become_fsids(ID_SHIFT + (seed % 3), ID_SHIFT);
	for (;;) {
		seed = seed * 1103515245 + 12345;
		snprintf(a, sizeof(a), "%s/n%u", dir, (seed >> 8) % NAMES);
		snprintf(b, sizeof(b), "%s/sub/n%u", dir, (seed >> 12) % NAMES);
		switch ((seed >> 16) % 10) {
		case 0:
			fd = open(a, O_CREAT | O_RDWR, 0666);
			if (fd >= 0) {
				if (write(fd, "data", 4) < 0)
					break;
				close(fd);
			}
			break;
		case 1:
			rename(a, b);
			break;
		case 2:
			rename(b, a);
			break;
		case 3:
			unlink(a);
			break;
		case 4:
			mkdir(a, 0777);
			break;
		case 5:
			rmdir(a);
			break;
		case 6:
			d = opendir(dir);
			if (d) {
				while ((de = readdir(d)))
					;
				closedir(d);
			}
			break;
		case 7:
			stat(a, &st);
			lstat(b, &st);
			break;
		case 8:
			fd = open(b, O_RDONLY);
			if (fd >= 0) {
				void *p = mmap(NULL, 4096, PROT_READ,
					       MAP_SHARED, fd, 0);

				if (p != MAP_FAILED)
					munmap(p, 4096);
				if (read(fd, buf, sizeof(buf)) < 0)
					break;
				close(fd);
			}
			break;
		case 9:
			link(b, a);
			break;
		}
	}
}

TEST(churn_through_and_underneath)
{
	pid_t pids[6];
	struct world w;
	int i;

	ASSERT_EQ(world_setup(&w), 0);
	ASSERT_EQ(chmod(w.lower, 0777), 0);
	ASSERT_EQ(mkdir(P(w.lower, "sub"), 0777), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	for (i = 0; i < 6; i++) {
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (pids[i] == 0) {
			churn(i < 4 ? w.mnt : w.lower, i * 7919 + 1, i < 4);
			_exit(0);
		}
	}
	sleep(STRESS_SECONDS);
	for (i = 0; i < 6; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < 6; i++)
		ASSERT_EQ(waitpid(pids[i], NULL, 0), pids[i]);
	/* Everything is released: a plain umount works. */
	EXPECT_EQ(umount(w.mnt), 0);
	EXPECT_EQ(umount(w.base), 0);
}

TEST_HARNESS_MAIN
