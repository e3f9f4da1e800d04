// SPDX-License-Identifier: GPL-2.0
/*
 * /init of the KUnit kernel's initramfs. The suites run before init; this
 * program then asks kmemleak for a scan, prints what it found between two
 * marker lines that scripts/kunit.sh reads, and reboots, which ends QEMU
 * (it runs with -no-reboot; the kernel has no ACPI to power off with).
 *
 * kmemleak does not report objects younger than its minimum age (5 s), so
 * the first scan comes after a pause; a second scan confirms the first, as
 * Documentation/dev-tools/kmemleak.rst suggests, so that a pointer held only
 * in a register or in flight at the first scan is not taken for a leak.
 *
 * Built with gcc -static by scripts/kunit.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEBUGFS		"/debug"
#define KMEMLEAK	DEBUGFS "/kmemleak"
/* Longer than kmemleak's minimum object age (MSECS_MIN_AGE). */
#define SETTLE_SECONDS	6

static int kmemleak_cmd(const char *cmd)
{
	int fd = open(KMEMLEAK, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, cmd, strlen(cmd));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* Print the report, each line prefixed; returns the number of leaks. */
static int kmemleak_dump(void)
{
	char line[512];
	int leaks = 0;
	FILE *f;

	f = fopen(KMEMLEAK, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "unreferenced object", 19))
			leaks++;
		printf("kite-leakcheck: %s", line);
	}
	fclose(f);
	return leaks;
}

int main(void)
{
	int leaks = -1, ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("kite-leakcheck: begin\n");
	mkdir(DEBUGFS, 0700);
	if (mount("debugfs", DEBUGFS, "debugfs", 0, NULL)) {
		printf("kite-leakcheck: error: mount debugfs: %s\n",
		       strerror(errno));
		goto out;
	}
	sleep(SETTLE_SECONDS);
	ret = kmemleak_cmd("scan");
	if (!ret)
		ret = kmemleak_cmd("scan");
	if (ret) {
		printf("kite-leakcheck: error: %s: %s\n", KMEMLEAK,
		       strerror(-ret));
		goto out;
	}
	leaks = kmemleak_dump();
	if (leaks < 0)
		printf("kite-leakcheck: error: read %s: %s\n", KMEMLEAK,
		       strerror(-leaks));
out:
	printf("kite-leakcheck: end leaks=%d\n", leaks);
	sync();
	reboot(RB_AUTOBOOT);
	return 0;
}
