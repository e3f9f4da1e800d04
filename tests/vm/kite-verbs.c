// SPDX-License-Identifier: GPL-2.0
/*
 * Kite verbs checks through libibverbs and the kite provider, run in a guest
 * (built on the host against out/rdma-core by scripts/mkinitramfs.sh and
 * installed as /usr/bin/kite-verbs).
 *
 *   kite-verbs limits          print the limits the device model implements
 *                              (qemu/kite_limits.h) as shell assignments
 *                              (KITE_DEF_MAX_QP=1024 ...), so that guest
 *                              scripts compare against the model's header
 *   kite-verbs basic DEV GID   open DEV, check its doorbell mapping, query
 *                              device and port, find GID (text form) on port
 *                              1, 100 PDs; CQs, QPs (RC/UC/UD, state
 *                              walks, illegal transitions), MRs (4 KiB,
 *                              2 MiB, 256 MiB, 1 GiB), error paths and
 *                              their errno, leak loops (with kmalloc slab
 *                              counts); context open/close cycles
 *   kite-verbs qp-hold DEV GID an RC QP in RTS on a path to itself (GID);
 *                              prints what ibv_query_qp says of it and
 *                              keeps it until stdin ends
 *
 * Each check prints one line in the tests/vm format: "ok NAME" or
 * "FAIL NAME: detail". Exit status 1 when a check failed, 2 on bad usage.
 *
 * This file holds the harness and the device, port and PD checks; the
 * others are split by topic (see kite-verbs.h).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include "kite-verbs.h"

#define NUM_PDS		100
/* More than KITE_MAX_UCTX: a leaked device context would make open fail. */
#define CTX_CYCLES	(KITE_MAX_UCTX + 45)
#define UVERBS_DEV	"/dev/infiniband/uverbs"

int failures;

void ok(const char *name)
{
	printf("ok %s\n", name);
	fflush(stdout);
}

void fail(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failures++;
}

/*
 * Mappings of a uverbs device in this process: how many, and how many of
 * them are one doorbell page, writable and shared.
 */
static void uverbs_maps(int *all, int *db_pages)
{
	unsigned long start, end;
	char line[512], perms[8];
	FILE *f;

	*all = 0;
	*db_pages = 0;
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, UVERBS_DEV))
			continue;
		(*all)++;
		if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3 &&
		    end - start == KITE_DB_PAGE_SIZE && perms[1] == 'w' &&
		    perms[3] == 's')
			(*db_pages)++;
	}
	fclose(f);
}

/* First line of a sysfs file of DEV, without the newline ("" on error). */
static void sysfs_read(const char *dev, const char *attr, char *buf, size_t len)
{
	char path[256];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/%s", dev, attr);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}


static void check_device(struct ibv_context *ctx, const char *dev)
{
	struct ibv_device_attr_ex ax = {};
	struct ibv_device_attr *a = &ax.orig_attr;
	char bad[1024] = "", fw[64], guid[64], want_guid[64];
	unsigned long long g;
	int err;

	err = ibv_query_device_ex(ctx, NULL, &ax);
	if (err) {
		fail("verbs-query-device", "ibv_query_device_ex: %s", strerror(err));
		return;
	}
	EXPECT(bad, "max_qp", a->max_qp, KITE_DEF_MAX_QP);
	EXPECT(bad, "max_cq", a->max_cq, KITE_DEF_MAX_CQ);
	EXPECT(bad, "max_mr", a->max_mr, KITE_DEF_MAX_MR);
	EXPECT(bad, "max_pd", a->max_pd, KITE_DEF_MAX_PD);
	EXPECT(bad, "max_cqe", a->max_cqe, KITE_DEF_MAX_CQE);
	EXPECT(bad, "max_qp_wr", a->max_qp_wr, KITE_DEF_MAX_QP_WR);
	EXPECT(bad, "max_sge", a->max_sge, KITE_DEF_MAX_SGE);
	EXPECT(bad, "max_qp_rd_atom", a->max_qp_rd_atom, KITE_DEF_MAX_RD_ATOM);
	EXPECT(bad, "max_mr_size", a->max_mr_size, KITE_DEF_MAX_MR_SIZE);
	EXPECT(bad, "max_mw", a->max_mw, KITE_DEF_MAX_MW);
	EXPECT(bad, "vendor_id", a->vendor_id, KITE_PCI_VENDOR_ID);
	EXPECT(bad, "vendor_part_id", a->vendor_part_id, KITE_PCI_DEVICE_ID);
	EXPECT(bad, "phys_port_cnt", a->phys_port_cnt, 1);
	sysfs_read(dev, "fw_ver", fw, sizeof(fw));
	if (strcmp(fw, a->fw_ver))
		snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
			 " fw_ver=%s (sysfs %s)", a->fw_ver, fw);
	/* sysfs prints the node GUID as 4 groups of 4 hex digits. */
	g = be64toh(a->node_guid);
	snprintf(guid, sizeof(guid), "%04llx:%04llx:%04llx:%04llx",
		 g >> 48, (g >> 32) & 0xffff, (g >> 16) & 0xffff, g & 0xffff);
	sysfs_read(dev, "node_guid", want_guid, sizeof(want_guid));
	if (strcmp(guid, want_guid))
		snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
			 " node_guid=%s (sysfs %s)", guid, want_guid);
	if (bad[0])
		fail("verbs-query-device", "%s", bad);
	else
		ok("verbs-query-device");
}

static void check_port(struct ibv_context *ctx, const char *gid_text)
{
	struct ibv_port_attr pa = {};
	union ibv_gid gid, want;
	char bad[512] = "";
	int err, i;

	err = ibv_query_port(ctx, 1, &pa);
	if (err) {
		fail("verbs-query-port", "ibv_query_port(1): %s", strerror(err));
		return;
	}
	EXPECT(bad, "state", pa.state, IBV_PORT_ACTIVE);
	EXPECT(bad, "link_layer", pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	EXPECT(bad, "gid_tbl_len", pa.gid_tbl_len, KITE_DEF_MAX_GID);
	EXPECT(bad, "max_msg_sz", pa.max_msg_sz, KITE_MAX_MSG_SIZE);
	if (bad[0])
		fail("verbs-query-port", "%s", bad);
	else
		ok("verbs-query-port");

	/* The device has one port: port 2 is an error, not garbage. */
	err = ibv_query_port(ctx, 2, &pa);
	if (err)
		ok("verbs-query-port-2-fails");
	else
		fail("verbs-query-port-2-fails", "ibv_query_port(2) succeeded");

	if (inet_pton(AF_INET6, gid_text, want.raw) != 1) {
		fail("verbs-query-gid", "bad GID argument '%s'", gid_text);
		return;
	}
	for (i = 0; i < KITE_DEF_MAX_GID; i++) {
		if (ibv_query_gid(ctx, 1, i, &gid))
			continue;
		if (!memcmp(gid.raw, want.raw, sizeof(gid.raw))) {
			ok("verbs-query-gid");
			return;
		}
	}
	fail("verbs-query-gid", "%s not in port 1's GID table", gid_text);
}

static void check_pds(struct ibv_context *ctx)
{
	struct ibv_pd *pd[NUM_PDS];
	int i, j, n = 0, err;

	for (i = 0; i < NUM_PDS; i++) {
		pd[i] = ibv_alloc_pd(ctx);
		if (!pd[i]) {
			fail("verbs-pd-x100", "ibv_alloc_pd #%d: %s", i,
			     strerror(errno));
			break;
		}
		n++;
		for (j = 0; j < i; j++) {
			if (pd[j]->handle == pd[i]->handle) {
				fail("verbs-pd-x100", "PDs #%d and #%d share handle %u",
				     j, i, pd[i]->handle);
				i = NUM_PDS;
				break;
			}
		}
	}
	for (i = 0; i < n; i++) {
		err = ibv_dealloc_pd(pd[i]);
		if (err) {
			fail("verbs-pd-x100", "ibv_dealloc_pd #%d: %s", i,
			     strerror(err));
			return;
		}
	}
	if (n == NUM_PDS)
		ok("verbs-pd-x100");
}
/* ---- helpers the checks share ------------------------------------------- */

/* Report a verb that should fail with WANT: ok, or FAIL with what happened. */
void expect_errno(const char *name, int succeeded, int err, int want)
{
	if (succeeded)
		fail(name, "succeeded, want %s", strerror(want));
	else if (err != want)
		fail(name, "errno %d (%s), want %d (%s)", err, strerror(err),
		     want, strerror(want));
	else
		ok(name);
}

struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      enum ibv_qp_type type, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = type,
		.cap = { .max_send_wr = 10, .max_recv_wr = 10,
			 .max_send_sge = QP_ASK_SGE, .max_recv_sge = QP_ASK_SGE,
			 .max_inline_data = QP_ASK_INLINE },
	};
	struct ibv_qp *qp;

	qp = ibv_create_qp(pd, &qa);
	if (qp && cap)
		*cap = qa.cap;
	return qp;
}

long read_long(const char *path)
{
	long v = -1;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int write_long(const char *path, long v)
{
	FILE *f;
	int err;

	f = fopen(path, "w");
	if (!f)
		return -1;
	err = fprintf(f, "%ld\n", v) < 0;
	return fclose(f) || err ? -1 : 0;
}
/* open_dev NAME: the verbs device NAME opened, or NULL (and a message). */
static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		fprintf(stderr, "cannot open %s: %s\n", name, strerror(errno));
	return ctx;
}

static int hold(const char *name, const char *gid_text)
{
	struct ibv_context *ctx = open_dev(name);
	int rc;

	if (!ctx)
		return 1;
	rc = qp_hold(ctx, gid_text);
	if (ibv_close_device(ctx))
		rc = 1;
	return rc;
}

static int basic(const char *name, const char *gid_text)
{
	struct ibv_device **list, *dev = NULL;
	struct ibv_context *ctx;
	int i, n, all, db, err;

	list = ibv_get_device_list(&n);
	if (!list) {
		fail("verbs-open", "ibv_get_device_list: %s", strerror(errno));
		return 1;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	if (!dev) {
		fail("verbs-open", "%s not among %d verbs devices", name, n);
		ibv_free_device_list(list);
		return 1;
	}

	ctx = ibv_open_device(dev);
	if (!ctx) {
		fail("verbs-open", "ibv_open_device(%s): %s", name,
		     strerror(errno));
		ibv_free_device_list(list);
		return 1;
	}
	ok("verbs-open");

	/* The provider maps exactly one doorbell page of its context. */
	uverbs_maps(&all, &db);
	if (all == 1 && db == 1)
		ok("verbs-doorbell-mapped");
	else
		fail("verbs-doorbell-mapped",
		     "%d mappings of %s*, %d of them one writable shared page",
		     all, UVERBS_DEV, db);

	check_device(ctx, name);
	check_port(ctx, gid_text);
	check_pds(ctx);
	check_objects(dev, ctx, gid_text);
	scale(ctx, gid_text);

	err = ibv_close_device(ctx);
	uverbs_maps(&all, &db);
	if (!err && all == 0)
		ok("verbs-close-unmaps");
	else
		fail("verbs-close-unmaps", "ibv_close_device: %d, %d mappings left",
		     err, all);

	/* Device contexts and doorbell pages are given back on close. */
	for (i = 0; i < CTX_CYCLES; i++) {
		ctx = ibv_open_device(dev);
		if (!ctx) {
			fail("verbs-context-cycles", "open #%d: %s", i + 1,
			     strerror(errno));
			break;
		}
		err = ibv_close_device(ctx);
		if (err) {
			fail("verbs-context-cycles", "close #%d: %d", i + 1, err);
			break;
		}
	}
	if (i == CTX_CYCLES)
		ok("verbs-context-cycles");

	ibv_free_device_list(list);
	return failures ? 1 : 0;
}

static void limits(void)
{
	printf("KITE_DEF_MAX_QP=%u\n", KITE_DEF_MAX_QP);
	printf("KITE_DEF_MAX_CQ=%u\n", KITE_DEF_MAX_CQ);
	printf("KITE_DEF_MAX_MR=%u\n", KITE_DEF_MAX_MR);
	printf("KITE_DEF_MAX_PD=%u\n", KITE_DEF_MAX_PD);
	printf("KITE_DEF_MAX_MW=%u\n", KITE_DEF_MAX_MW);
	printf("KITE_DEF_MAX_GID=%u\n", KITE_DEF_MAX_GID);
	printf("KITE_PCI_VENDOR_ID=0x%04x\n", KITE_PCI_VENDOR_ID);
	printf("KITE_PCI_DEVICE_ID=0x%04x\n", KITE_PCI_DEVICE_ID);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "limits")) {
		limits();
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "basic"))
		return basic(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "qp-hold"))
		return hold(argv[2], argv[3]);
	fprintf(stderr, "usage: %s limits | basic DEV GID | qp-hold DEV GID\n",
		argv[0]);
	return 2;
}
