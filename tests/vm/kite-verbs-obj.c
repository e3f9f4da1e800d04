// SPDX-License-Identifier: GPL-2.0
/*
 * kite-verbs' object checks: CQ create, resize and arming; QP creation of
 * each type and its reported caps (UD only when the device offers it);
 * MRs of 4 KiB, 2 MiB, 256 MiB and 1 GiB; error paths and their errno.
 * check_objects() runs them, the QP walks and the leak loops in order.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "kite-verbs.h"

#define MR_2M		(2ul << 20)
#define MR_LARGE	(256ul << 20)
#define MR_1G		(1ul << 30)
#define HUGEPAGES	"/proc/sys/vm/nr_hugepages"
#define MIN_DEPTH	(1 << KITE_MIN_LOG_DEPTH)	/* the smallest ring */

static void check_cq(struct ibv_context *ctx)
{
	struct ibv_cq *cq, *small;
	int err;

	cq = ibv_create_cq(ctx, CQ_SIZE - 3, NULL, NULL, 0);
	if (!cq) {
		fail("verbs-cq-create-destroy", "ibv_create_cq(%d): %s",
		     CQ_SIZE - 3, strerror(errno));
		return;
	}
	/* Depth: roundup_pow_of_two(max(cqe, the smallest ring)). */
	small = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	if (!small) {
		fail("verbs-cq-create-destroy", "ibv_create_cq(1): %s",
		     strerror(errno));
		ibv_destroy_cq(cq);
		return;
	}
	if (cq->cqe != CQ_SIZE || small->cqe != MIN_DEPTH)
		fail("verbs-cq-create-destroy", "cqe %d for 13 (want %d), %d for 1 (want %d)",
		     cq->cqe, CQ_SIZE, small->cqe, MIN_DEPTH);
	else if ((err = ibv_destroy_cq(small)) || (err = ibv_destroy_cq(cq)))
		fail("verbs-cq-create-destroy", "ibv_destroy_cq: %s", strerror(err));
	else
		ok("verbs-cq-create-destroy");
}

/*
 * Resize a CQ of 13 (16) entries to 100 (reported: the rounded depth 128),
 * back down, and beyond max_cqe (EINVAL, CQ unchanged); then arm it for
 * solicited and for any completion through the provider's doorbell.
 */
static void check_cq_resize_notify(struct ibv_context *ctx)
{
	struct ibv_device_attr attr;
	struct ibv_cq *cq;
	int err;

	err = ibv_query_device(ctx, &attr);
	cq = err ? NULL : ibv_create_cq(ctx, CQ_SIZE - 3, NULL, NULL, 0);
	if (!cq) {
		fail("verbs-cq-resize", "query/create: %s",
		     strerror(err ? err : errno));
		fail("verbs-cq-req-notify", "no CQ");
		return;
	}
	err = ibv_resize_cq(cq, 100);
	if (err)
		fail("verbs-cq-resize", "ibv_resize_cq(100): %s", strerror(err));
	else if (cq->cqe != 128)
		fail("verbs-cq-resize", "cqe %d after resize to 100 (want 128)",
		     cq->cqe);
	else if ((err = ibv_resize_cq(cq, CQ_SIZE - 3)) || cq->cqe != CQ_SIZE)
		fail("verbs-cq-resize", "resize back to %d: %s, cqe %d",
		     CQ_SIZE - 3, strerror(err), cq->cqe);
	else if ((err = ibv_resize_cq(cq, attr.max_cqe + 1)) != EINVAL ||
		 cq->cqe != CQ_SIZE)
		fail("verbs-cq-resize", "resize to max_cqe + 1: %s (want EINVAL), cqe %d",
		     strerror(err), cq->cqe);
	else
		ok("verbs-cq-resize");

	err = ibv_req_notify_cq(cq, 1);
	if (err)
		fail("verbs-cq-req-notify", "solicited: %s", strerror(err));
	else if ((err = ibv_req_notify_cq(cq, 0)))
		fail("verbs-cq-req-notify", "next: %s", strerror(err));
	else
		ok("verbs-cq-req-notify");
	err = ibv_destroy_cq(cq);
	if (err)
		fail("verbs-cq-resize", "ibv_destroy_cq: %s", strerror(err));
}

/* QP of TYPE: created in RESET, caps reported as the rings hold them. */
static void check_qp_create(struct ibv_pd *pd, struct ibv_cq *cq,
			    enum ibv_qp_type type, const char *name)
{
	struct ibv_qp_init_attr init = {};
	struct ibv_qp_attr attr = {};
	struct ibv_qp_cap cap;
	const uint32_t sq_room = kite_sq_room(kite_sq_log_stride(QP_ASK_SGE, QP_ASK_INLINE));
	const uint32_t rq_room = kite_rq_room(kite_rq_log_stride(QP_ASK_SGE));
	char bad[512] = "";
	struct ibv_qp *qp;
	int err;

	qp = make_qp(pd, cq, type, &cap);
	if (!qp) {
		fail(name, "ibv_create_qp: %s", strerror(errno));
		return;
	}
	/*
	 * Asked: 10 WRs, 2 SGEs, 64 bytes inline (make_qp). Rings: depth 16,
	 * the WQE strides the ABI gives for those SGEs and inline bytes, and
	 * their room after the fixed part filled with SGEs or inline data.
	 */
	EXPECT(bad, "max_send_wr", cap.max_send_wr, 16);
	EXPECT(bad, "max_recv_wr", cap.max_recv_wr, 16);
	EXPECT(bad, "max_send_sge", cap.max_send_sge, sq_room / sizeof(struct kite_sge));
	EXPECT(bad, "max_recv_sge", cap.max_recv_sge, rq_room / sizeof(struct kite_sge));
	EXPECT(bad, "max_inline_data", cap.max_inline_data, sq_room);
	if (!qp->qp_num)
		snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), " qp_num 0");
	err = ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_CAP, &init);
	if (err)
		snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
			 " ibv_query_qp: %s", strerror(err));
	else
		EXPECT(bad, "state", attr.qp_state, IBV_QPS_RESET);
	err = ibv_destroy_qp(qp);
	if (err)
		snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
			 " ibv_destroy_qp: %s", strerror(err));
	if (bad[0])
		fail(name, "%s", bad);
	else
		ok(name);
}
/* Register LEN bytes at BUF, check the keys, deregister. */
static void check_mr(struct ibv_pd *pd, void *buf, size_t len,
		     const char *name)
{
	struct ibv_mr *mr, *again;
	uint32_t lkey;
	int err;

	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr) {
		fail(name, "ibv_reg_mr(%zu bytes): %s", len, strerror(errno));
		return;
	}
	if (mr->addr != buf || mr->length != len) {
		fail(name, "MR covers %p+%zu, want %p+%zu", mr->addr,
		     mr->length, buf, len);
		ibv_dereg_mr(mr);
		return;
	}
	lkey = mr->lkey;
	err = ibv_dereg_mr(mr);
	if (err) {
		fail(name, "ibv_dereg_mr: %s", strerror(err));
		return;
	}
	/* A new registration never gets the key of the old one. */
	again = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!again) {
		fail(name, "second ibv_reg_mr: %s", strerror(errno));
		return;
	}
	if (again->lkey == lkey)
		fail(name, "re-registration reuses lkey 0x%x", lkey);
	else if ((err = ibv_dereg_mr(again)))
		fail(name, "second ibv_dereg_mr: %s", strerror(err));
	else
		ok(name);
}
static void check_mrs(struct ibv_pd *pd)
{
	static char small[4096] __attribute__((aligned(4096)));
	long hp_before;
	int huge = 0;
	void *buf;

	check_mr(pd, small, sizeof(small), "verbs-mr-4k");

	/* 2 MiB: one huge page when the guest can reserve one. */
	hp_before = read_long(HUGEPAGES);
	if (hp_before >= 0 && (hp_before >= 1 || !write_long(HUGEPAGES, 1)) &&
	    read_long(HUGEPAGES) >= 1) {
		buf = mmap(NULL, MR_2M, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		huge = buf != MAP_FAILED;
	}
	if (huge) {
		memset(buf, 0x5a, MR_2M);
		check_mr(pd, buf, MR_2M, "verbs-mr-2m-hugepage");
		munmap(buf, MR_2M);
	} else if (!posix_memalign(&buf, MR_2M, MR_2M)) {
		memset(buf, 0x5a, MR_2M);
		check_mr(pd, buf, MR_2M, "verbs-mr-2m-aligned-no-hugepage");
		free(buf);
	} else {
		fail("verbs-mr-2m-aligned-no-hugepage", "no memory");
	}
	if (hp_before >= 0 && read_long(HUGEPAGES) != hp_before)
		write_long(HUGEPAGES, hp_before);

	buf = mmap(NULL, MR_LARGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		fail("verbs-mr-256m", "mmap: %s", strerror(errno));
	} else {
		check_mr(pd, buf, MR_LARGE, "verbs-mr-256m");
		munmap(buf, MR_LARGE);
	}
	/* The pair group boots guest a with 3 GiB (tests/vm/run.sh). */
	buf = mmap(NULL, MR_1G, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED) {
		fail("verbs-mr-1g", "mmap: %s", strerror(errno));
	} else {
		long t0 = now_ms();

		check_mr(pd, buf, MR_1G, "verbs-mr-1g");
		printf("info: 1 GiB MR registered twice in %ld ms\n",
		       now_ms() - t0);
		munmap(buf, MR_1G);
	}
}

/* Error paths: each must fail with the errno ib_core users expect. */
static void check_errors(struct ibv_device *dev, struct ibv_context *ctx,
			 struct ibv_pd *pd, struct ibv_cq *cq)
{
	static char buf[4096] __attribute__((aligned(4096)));
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_device_attr da;
	struct ibv_context *ctx2;
	struct ibv_pd *pd2;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_cq *c;
	int err;

	errno = 0;
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE);
	expect_errno("verbs-mr-remote-write-no-local-einval", !!mr, errno, EINVAL);
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE);
	expect_errno("verbs-mr-zero-length-einval", !!mr, errno, EINVAL);
	if (mr)
		ibv_dereg_mr(mr);

	err = ibv_query_device(ctx, &da);
	if (err) {
		fail("verbs-limits-einval", "ibv_query_device: %s", strerror(err));
		return;
	}
	errno = 0;
	c = ibv_create_cq(ctx, da.max_cqe + 1, NULL, NULL, 0);
	expect_errno("verbs-cq-over-max-cqe-einval", !!c, errno, EINVAL);
	if (c)
		ibv_destroy_cq(c);
	qa.cap.max_send_wr = da.max_qp_wr + 1;
	errno = 0;
	qp = ibv_create_qp(pd, &qa);
	expect_errno("verbs-qp-over-max-wr-einval", !!qp, errno, EINVAL);
	if (qp)
		ibv_destroy_qp(qp);
	qa.cap.max_send_wr = 1;
	qa.cap.max_send_sge = da.max_sge + 1;
	errno = 0;
	qp = ibv_create_qp(pd, &qa);
	expect_errno("verbs-qp-over-max-sge-einval", !!qp, errno, EINVAL);
	if (qp)
		ibv_destroy_qp(qp);
	qa.cap.max_send_sge = 1;

	/* A PD of another context with this context's CQ. */
	ctx2 = ibv_open_device(dev);
	pd2 = ctx2 ? ibv_alloc_pd(ctx2) : NULL;
	if (!pd2) {
		fail("verbs-qp-foreign-pd-fails", "second context/PD: %s",
		     strerror(errno));
	} else {
		errno = 0;
		qp = ibv_create_qp(pd2, &qa);
		if (qp) {
			fail("verbs-qp-foreign-pd-fails", "ibv_create_qp succeeded");
			ibv_destroy_qp(qp);
		} else {
			printf("info: QP with another context's PD: %s\n",
			       strerror(errno));
			ok("verbs-qp-foreign-pd-fails");
		}
	}
	if (pd2)
		ibv_dealloc_pd(pd2);
	if (ctx2)
		ibv_close_device(ctx2);

	/* A CQ that a QP still uses cannot go. */
	c = ibv_create_cq(ctx, CQ_SIZE, NULL, NULL, 0);
	qa.send_cq = qa.recv_cq = c;
	qp = c ? ibv_create_qp(pd, &qa) : NULL;
	if (!qp) {
		fail("verbs-cq-in-use-ebusy", "CQ/QP: %s", strerror(errno));
	} else {
		err = ibv_destroy_cq(c);
		expect_errno("verbs-cq-in-use-ebusy", !err, err, EBUSY);
		if (!err)
			c = NULL;
		ibv_destroy_qp(qp);
	}
	if (c && (err = ibv_destroy_cq(c)))
		fail("verbs-cq-in-use-ebusy", "destroy after the QP: %s",
		     strerror(err));
}
/*
 * The device's KITE_REG_CAP_FLAGS (BAR0, read-only) through the PCI
 * function's sysfs resource0; -1 when it cannot be read. The driver offers
 * a QP type only when the device has its cap bit (KITE_DEV_CAP_UD for UD).
 */
static long dev_cap_flags(const char *dev)
{
	char path[256];
	volatile uint32_t *bar;
	long caps;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/resource0", dev);
	fd = open(path, O_RDONLY | O_SYNC);
	if (fd < 0)
		return -1;
	bar = mmap(NULL, KITE_REG_CAP_FLAGS + sizeof(*bar), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (bar == MAP_FAILED)
		return -1;
	caps = bar[KITE_REG_CAP_FLAGS / sizeof(*bar)];
	munmap((void *)bar, KITE_REG_CAP_FLAGS + sizeof(*bar));
	return caps;
}

/* Without KITE_DEV_CAP_UD: creating a UD QP must fail with EOPNOTSUPP. */
static void check_qp_ud_refused(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(pd, &ia);
	if (qp) {
		ibv_destroy_qp(qp);
		fail("verbs-qp-ud-create-destroy",
		     "a UD QP was created although the device lacks KITE_DEV_CAP_UD");
	} else if (errno != EOPNOTSUPP) {
		fail("verbs-qp-ud-create-destroy", "ibv_create_qp(UD): %s, want EOPNOTSUPP",
		     strerror(errno));
	} else {
		ok("verbs-qp-ud-create-destroy");
	}
	printf("skip verbs-qp-ud-walk: the device has no KITE_DEV_CAP_UD\n");
	printf("skip verbs-qp-ud-sqd: the device has no KITE_DEV_CAP_UD\n");
	fflush(stdout);
}

void check_objects(struct ibv_device *dev, struct ibv_context *ctx,
			  const char *gid_text)
{
	long caps = dev_cap_flags(ibv_get_device_name(dev));
	const char *name = ibv_get_device_name(dev);
	union ibv_gid gid = {};
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	long start = now_ms(), t0;
	int gid_index = -1;

	if (inet_pton(AF_INET6, gid_text, gid.raw) == 1)
		gid_index = find_gid(ctx, &gid);

	check_cq(ctx);
	check_cq_resize_notify(ctx);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, CQ_SIZE, NULL, NULL, 0);
	if (!pd || !cq) {
		fail("verbs-objects", "PD/CQ for the QP checks: %s",
		     strerror(errno));
		if (cq)
			ibv_destroy_cq(cq);
		if (pd)
			ibv_dealloc_pd(pd);
		return;
	}
	check_qp_create(pd, cq, IBV_QPT_RC, "verbs-qp-rc-create-destroy");
	check_qp_create(pd, cq, IBV_QPT_UC, "verbs-qp-uc-create-destroy");
	if (caps < 0) {
		/*
		 * BAR0 not mappable from user space (a strict devmem kernel
		 * keeps a driver's regions to itself): learn it from the
		 * driver, which must then refuse with exactly EOPNOTSUPP.
		 */
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ibv_qp *qp;

		errno = 0;
		qp = ibv_create_qp(pd, &ia);
		if (qp)
			ibv_destroy_qp(qp);
		else if (errno == EOPNOTSUPP)
			caps = KITE_DEV_CAP_RC | KITE_DEV_CAP_UC;	/* no UD */
		printf("info: KITE_REG_CAP_FLAGS not readable; UD QP %s\n",
		       qp ? "created: UD offered" : strerror(errno));
	} else {
		printf("info: device cap flags %#lx\n", caps);
	}
	if (caps < 0 || (caps & KITE_DEV_CAP_UD))
		check_qp_create(pd, cq, IBV_QPT_UD, "verbs-qp-ud-create-destroy");
	else
		check_qp_ud_refused(pd, cq);
	if (gid_index < 0) {
		fail("verbs-qp-rc-walk", "%s not in the GID table", gid_text);
		fail("verbs-qp-uc-walk", "no GID");
	} else {
		check_qp_walk(pd, cq, IBV_QPT_RC, &gid, gid_index,
			      "verbs-qp-rc-walk");
		check_qp_walk(pd, cq, IBV_QPT_UC, &gid, gid_index,
			      "verbs-qp-uc-walk");
	}
	if (caps < 0 || (caps & KITE_DEV_CAP_UD))
		check_qp_walk(pd, cq, IBV_QPT_UD, &gid, gid_index, "verbs-qp-ud-walk");
	check_qp_illegal(pd, cq, &gid, gid_index < 0 ? 0 : gid_index);
	check_mrs(pd);
	check_errors(dev, ctx, pd, cq);
	t0 = now_ms();
	check_leaks(name, ctx, pd);
	check_leak_pd(name, ctx);
	printf("info: object checks %ld ms, of which leak loops %ld ms\n",
	       now_ms() - start, now_ms() - t0);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}
