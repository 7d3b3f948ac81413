/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small test harness in the style of the kernel's kselftest_harness.h,
 * written for shiftfs' guest test programs and host unit tests.
 *
 *	#include "harness.h"
 *
 *	TEST(stat_shows_shifted_ids)
 *	{
 *		struct stat st;
 *
 *		ASSERT_EQ(stat("/mnt/f", &st), 0);
 *		EXPECT_EQ(st.st_uid, 100000);
 *	}
 *
 *	TEST_HARNESS_MAIN
 *
 * Every test runs in a forked child so that it can unshare(), setuid() or
 * crash without affecting the others.  ASSERT_* ends the test at the first
 * failure, EXPECT_* records the failure and goes on.  SKIP(fmt, ...) ends
 * the test as skipped with a reason.  Output is TAP version 13 on stdout;
 * diagnostics are "# " lines.  A test that does not finish within
 * HARNESS_TIMEOUT seconds (default 60, overridable per program by defining
 * it before including this file, or at run time with $HARNESS_TIMEOUT),
 * times $HARNESS_TIMEOUT_SCALE if set (a debug kernel is several times
 * slower: make check-debug), is killed and reported as "not ok ...
 * # TIMEOUT".
 *
 * With arguments, only tests whose names contain one of them are run.
 *
 * Tests that start from the same world share a fixture, as in kselftest:
 *
 *	FIXTURE(world) {
 *		struct world w;
 *	};
 *
 *	FIXTURE_SETUP(world)
 *	{
 *		ASSERT_EQ(world_setup(&self->w), 0);
 *	}
 *
 *	FIXTURE_TEARDOWN(world)
 *	{
 *	}
 *
 *	TEST_F(world, chown_through_mount)
 *	{
 *		ASSERT_EQ(shiftfs_mount_default(&self->w), 0);
 *		...
 *	}
 *
 * (That world fixture is defined once, in tests/guest/shiftfs_util.h, for
 * every guest program; a program defines only fixtures of its own.)
 *
 * Each TEST_F gets a zeroed fixture of its own, set up in its forked child
 * before the test body runs; an ASSERT_* or SKIP() in the setup ends the
 * test as it would in the body.  The teardown runs after a body that
 * returned (not after an ASSERT_* failure or SKIP(), which end the child:
 * what the child set up in its own namespaces goes with it).  The test is
 * named by its own name alone, as a TEST() of the same name would be.
 */
#ifndef SHIFTFS_TESTS_HARNESS_H
#define SHIFTFS_TESTS_HARNESS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef HARNESS_TIMEOUT
#define HARNESS_TIMEOUT 60
#endif

#define HARNESS_MAX_TESTS 256

struct harness_test {
	const char *name;
	void (*fn)(void);
};

/* Shared with the forked child through an anonymous shared mapping. */
struct harness_result {
	int failed;
	int skipped;
	char skip_reason[256];
};

static struct harness_test harness_tests[HARNESS_MAX_TESTS];
static int harness_ntests;
static struct harness_result *harness_cur;

static inline void harness_register(const char *name, void (*fn)(void))
{
	if (harness_ntests >= HARNESS_MAX_TESTS) {
		fprintf(stderr, "harness: too many tests\n");
		abort();
	}
	harness_tests[harness_ntests].name = name;
	harness_tests[harness_ntests].fn = fn;
	harness_ntests++;
}

#define TEST(name)							\
	static void harness_test_##name(void);				\
	static void __attribute__((constructor))			\
	harness_register_##name(void)					\
	{								\
		harness_register(#name, harness_test_##name);		\
	}								\
	static void harness_test_##name(void)

#define FIXTURE(fname) struct harness_fixture_##fname

/* Unused is no error: a shared header may define a fixture. */
#define FIXTURE_SETUP(fname)						\
	static void __attribute__((unused)) harness_setup_##fname(	\
		struct harness_fixture_##fname *self __attribute__((unused)))

#define FIXTURE_TEARDOWN(fname)						\
	static void __attribute__((unused)) harness_teardown_##fname(	\
		struct harness_fixture_##fname *self __attribute__((unused)))

#define TEST_F(fname, name)						\
	static void harness_body_##fname##_##name(			\
		struct harness_fixture_##fname *self);			\
	TEST(name)							\
	{								\
		struct harness_fixture_##fname self;			\
									\
		memset(&self, 0, sizeof(self));				\
		harness_setup_##fname(&self);				\
		harness_body_##fname##_##name(&self);			\
		harness_teardown_##fname(&self);			\
	}								\
	static void harness_body_##fname##_##name(			\
		struct harness_fixture_##fname *self)

#define TH_LOG(fmt, ...)						\
	do {								\
		fprintf(stdout, "# %s:%d: " fmt "\n", __FILE__,		\
			__LINE__, ##__VA_ARGS__);			\
		fflush(stdout);						\
	} while (0)

#define SKIP(fmt, ...)							\
	do {								\
		harness_cur->skipped = 1;				\
		snprintf(harness_cur->skip_reason,			\
			 sizeof(harness_cur->skip_reason),		\
			 fmt, ##__VA_ARGS__);				\
		_exit(0);						\
	} while (0)

static inline void harness_fail(int fatal)
{
	harness_cur->failed = 1;
	if (fatal) {
		fflush(stdout);
		_exit(1);
	}
}

/*
 * Values are compared as intmax_t (signed) or uintmax_t where both sides are
 * unsigned; printing both as long long keeps messages readable for the ids,
 * sizes and return values these tests compare.
 */
#define __HARNESS_CMP(fatal, a, op, b)					\
	do {								\
		__typeof__(a) __a = (a);				\
		__typeof__(b) __b = (b);				\
		if (!(__a op __b)) {					\
			int __e = errno;				\
			fprintf(stdout,					\
				"# %s:%d: expected %s %s %s "		\
				"(%lld %s %lld) errno=%d (%s)\n",	\
				__FILE__, __LINE__, #a, #op, #b,	\
				(long long)__a, #op, (long long)__b,	\
				__e, strerror(__e));			\
			harness_fail(fatal);				\
		}							\
	} while (0)

#define ASSERT_EQ(a, b) __HARNESS_CMP(1, a, ==, b)
#define ASSERT_NE(a, b) __HARNESS_CMP(1, a, !=, b)
#define ASSERT_LT(a, b) __HARNESS_CMP(1, a, <, b)
#define ASSERT_LE(a, b) __HARNESS_CMP(1, a, <=, b)
#define ASSERT_GT(a, b) __HARNESS_CMP(1, a, >, b)
#define ASSERT_GE(a, b) __HARNESS_CMP(1, a, >=, b)
#define EXPECT_EQ(a, b) __HARNESS_CMP(0, a, ==, b)
#define EXPECT_NE(a, b) __HARNESS_CMP(0, a, !=, b)
#define EXPECT_LT(a, b) __HARNESS_CMP(0, a, <, b)
#define EXPECT_LE(a, b) __HARNESS_CMP(0, a, <=, b)
#define EXPECT_GT(a, b) __HARNESS_CMP(0, a, >, b)
#define EXPECT_GE(a, b) __HARNESS_CMP(0, a, >=, b)

#define __HARNESS_BOOL(fatal, x, want)					\
	do {								\
		if ((bool)(x) != (want)) {				\
			int __e = errno;				\
			fprintf(stdout,					\
				"# %s:%d: expected %s to be %s "	\
				"errno=%d (%s)\n", __FILE__, __LINE__,	\
				#x, (want) ? "true" : "false", __e,	\
				strerror(__e));				\
			harness_fail(fatal);				\
		}							\
	} while (0)

#define ASSERT_TRUE(x) __HARNESS_BOOL(1, x, true)
#define ASSERT_FALSE(x) __HARNESS_BOOL(1, x, false)
#define EXPECT_TRUE(x) __HARNESS_BOOL(0, x, true)
#define EXPECT_FALSE(x) __HARNESS_BOOL(0, x, false)

#define __HARNESS_STR(fatal, a, b, want_eq)				\
	do {								\
		const char *__a = (a), *__b = (b);			\
		if ((!__a || !__b || strcmp(__a, __b) != 0) ==		\
		    (want_eq)) {					\
			fprintf(stdout,					\
				"# %s:%d: expected %s %s %s "		\
				"(\"%s\" vs \"%s\")\n", __FILE__,	\
				__LINE__, #a, (want_eq) ? "==" : "!=",	\
				#b, __a ? __a : "(null)",		\
				__b ? __b : "(null)");			\
			harness_fail(fatal);				\
		}							\
	} while (0)

#define ASSERT_STREQ(a, b) __HARNESS_STR(1, a, b, true)
#define ASSERT_STRNE(a, b) __HARNESS_STR(1, a, b, false)
#define EXPECT_STREQ(a, b) __HARNESS_STR(0, a, b, true)
#define EXPECT_STRNE(a, b) __HARNESS_STR(0, a, b, false)

/*
 * ASSERT_ERRNO(call, err): the call returns -1 (or a negative value) and
 * sets errno to err.  The usual way to say "this must be refused with ...".
 */
#define __HARNESS_ERRNO(fatal, call, err)				\
	do {								\
		long __r;						\
		errno = 0;						\
		__r = (long)(call);					\
		if (__r >= 0 || errno != (err)) {			\
			int __e = errno;				\
			fprintf(stdout,					\
				"# %s:%d: expected %s to fail with "	\
				"%s, got %ld errno=%d (%s)\n",		\
				__FILE__, __LINE__, #call, #err, __r,	\
				__e, strerror(__e));			\
			harness_fail(fatal);				\
		}							\
	} while (0)

#define ASSERT_ERRNO(call, err) __HARNESS_ERRNO(1, call, err)
#define EXPECT_ERRNO(call, err) __HARNESS_ERRNO(0, call, err)

static inline bool harness_selected(const char *name, int argc, char **argv)
{
	int i;

	if (argc < 2)
		return true;
	for (i = 1; i < argc; i++)
		if (strstr(name, argv[i]))
			return true;
	return false;
}

static inline int harness_run_one(int idx, int num, int timeout)
{
	const struct harness_test *t = &harness_tests[idx];
	struct timespec deadline, now;
	int status = 0, ok;
	pid_t pid, r;

	memset(harness_cur, 0, sizeof(*harness_cur));
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("not ok %d %s # fork: %s\n", num, t->name,
		       strerror(errno));
		return 1;
	}
	if (pid == 0) {
		/* Own process group, so a timeout kills helpers too. */
		setpgid(0, 0);
		t->fn();
		fflush(stdout);
		_exit(harness_cur->failed ? 1 : 0);
	}
	setpgid(pid, pid);

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout;
	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			status = -1;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > deadline.tv_sec ||
		    (now.tv_sec == deadline.tv_sec &&
		     now.tv_nsec >= deadline.tv_nsec)) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			printf("not ok %d %s # TIMEOUT after %ds\n", num,
			       t->name, timeout);
			return 1;
		}
		usleep(10000);
	}
	/* Reap anything the test left in its process group. */
	kill(-pid, SIGKILL);

	if (WIFSIGNALED(status)) {
		printf("# %s: killed by signal %d (%s)\n", t->name,
		       WTERMSIG(status), strsignal(WTERMSIG(status)));
		printf("not ok %d %s\n", num, t->name);
		return 1;
	}
	ok = status == 0 && !harness_cur->failed &&
	     WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (ok && harness_cur->skipped) {
		printf("ok %d %s # SKIP %s\n", num, t->name,
		       harness_cur->skip_reason);
		return 0;
	}
	printf("%s %d %s\n", ok ? "ok" : "not ok", num, t->name);
	return ok ? 0 : 1;
}

/*
 * How much slower than a normal kernel this one is said to be:
 * $HARNESS_TIMEOUT_SCALE (the debug kernels: five), else 1.
 */
static inline int harness_timeout_scale(void)
{
	const char *env = getenv("HARNESS_TIMEOUT_SCALE");

	return env && atoi(env) > 0 ? atoi(env) : 1;
}

static inline int harness_main(int argc, char **argv)
{
	int i, num = 0, selected = 0, failed = 0, timeout = HARNESS_TIMEOUT;
	const char *env = getenv("HARNESS_TIMEOUT");

	if (env && atoi(env) > 0)
		timeout = atoi(env);
	timeout *= harness_timeout_scale();
	setvbuf(stdout, NULL, _IOLBF, 0);
	harness_cur = mmap(NULL, sizeof(*harness_cur), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (harness_cur == MAP_FAILED) {
		perror("harness: mmap");
		return 1;
	}
	for (i = 0; i < harness_ntests; i++)
		if (harness_selected(harness_tests[i].name, argc, argv))
			selected++;
	printf("TAP version 13\n1..%d\n", selected);
	for (i = 0; i < harness_ntests; i++) {
		if (!harness_selected(harness_tests[i].name, argc, argv))
			continue;
		failed += harness_run_one(i, ++num, timeout);
	}
	return failed ? 1 : 0;
}

#define TEST_HARNESS_MAIN						\
	int main(int argc, char **argv)					\
	{								\
		return harness_main(argc, argv);			\
	}

#endif /* SHIFTFS_TESTS_HARNESS_H */
