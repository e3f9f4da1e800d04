// SPDX-License-Identifier: GPL-2.0
/*
 * Bad udata for every uverbs command that carries kite driver data, issued
 * as raw commands through the legacy write() interface of the kite uverbs
 * device (built on the host by scripts/mkinitramfs.sh, run in a guest as
 * /usr/bin/kite-uverbs-fuzz DEV [SEED]).
 *
 * For GET_CONTEXT, ALLOC_PD, CREATE_CQ, RESIZE_CQ, CREATE_QP, CREATE_SRQ,
 * MODIFY_SRQ, CREATE_AH, REG_MR and MODIFY_QP (legacy and extended): driver
 * request too short, too long with non-zero trailing bytes, comp_mask and
 * reserved fields set, bad ring and doorbell-record addresses and lengths,
 * response buffers too short or unwritable; then a seeded loop of random
 * garbage. Each call must fail with a clean errno (never EIO, never
 * success, never a hang). Afterwards a valid CQ and QP can still be
 * created, and once the file is closed the device's object counts
 * (hw_counters num_cq/num_qp/num_mr) are back where they started. The
 * kernel log is checked by the calling script.
 *
 * The legacy write() interface counts request lengths in 4-byte words
 * (extended commands: 8-byte words), so "too short" means 0, 4, 8 and
 * sizeof - 4 bytes; lengths that are not a multiple of 4 cannot be sent.
 *
 * One line per class: "ok NAME" or "FAIL NAME: detail" (tests/vm format).
 * Exit status 1 when a check failed, 2 on bad usage.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <uapi/rdma/kite-abi.h>

#define PAGE		4096ul
#define CQE		4
#define QP_WR		4
#define HANG_S		20	/* one command taking this long is a hang */
#define RANDOM_CMDS	2000
#define RANDOM_MAX_S	120
#define MAX_DRV		128	/* driver request bytes sent at most */
#define KERNEL_VA	0xffff888000000000ull
#define TOP_VA		0xfffffffffffff000ull
#define IB_QPT_RC	2
#define QPS_RESET	0
#define QPS_INIT	1
#define QP_STATE	(1u << 0)
#define QP_ACCESS	(1u << 3)
#define QP_PKEY		(1u << 4)
#define QP_PORT		(1u << 5)
#define ACCESS_LOCAL_WRITE 1
/* Any result: the kernel may accept or refuse it (see the call). */
#define ANY		1
/* Some clean errno. */
#define SOME_ERR	2
/* Success only: the valid request next to the bad ones. */
#define MUST_OK		3

static int failures;
static const char *ibdev;
static char devpath[64];

/* ---- result classes ------------------------------------------------------ */

static const char *cls;
static char cls_bad[600];
static char cls_seen[400];	/* results in order: "0" or an errno name */
static int cls_cases;

static void class_begin(const char *name)
{
	cls = name;
	cls_bad[0] = '\0';
	cls_seen[0] = '\0';
	cls_cases = 0;
}

static void class_end(void)
{
	if (cls_cases <= 16)
		printf("info: %s results:%s\n", cls, cls_seen);
	if (cls_bad[0]) {
		printf("FAIL %s:%s\n", cls, cls_bad);
		failures++;
	} else {
		printf("ok %s\n", cls);
	}
	fflush(stdout);
}

static void class_note(const char *fmt, ...)
{
	size_t l = strlen(cls_bad);
	va_list ap;

	if (l > sizeof(cls_bad) - 100)
		return;
	va_start(ap, fmt);
	vsnprintf(cls_bad + l, sizeof(cls_bad) - l, fmt, ap);
	va_end(ap);
}

static int clean_errno(int e)
{
	switch (e) {
	case EINVAL: case EFAULT: case EOPNOTSUPP: case ENOMEM: case ENOSPC:
	case EPERM: case ENOENT: case EBUSY: case E2BIG: case EACCES:
	case ERANGE: case EOVERFLOW:
		return 1;
	}
	return 0;
}

/*
 * One case: RC is 0 or -errno; WANT an errno, SOME_ERR or ANY (a clean
 * errno or success). Returns 1 when the case succeeded.
 */
static const char *errname(int e)
{
	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOMEM: return "ENOMEM";
	case ENOSPC: return "ENOSPC";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EBUSY: return "EBUSY";
	}
	return "other";
}

static int expect(const char *what, int rc, int want)
{
	size_t l = strlen(cls_seen);

	if (l < sizeof(cls_seen) - 16)
		snprintf(cls_seen + l, sizeof(cls_seen) - l, " %s", errname(-rc));
	cls_cases++;
	if (!rc) {
		if (want != ANY && want != MUST_OK)
			class_note(" %s: succeeded", what);
		return 1;
	}
	if (want == MUST_OK)
		class_note(" %s: errno %d (%s), want success", what, -rc,
			   strerror(-rc));
	else if (!clean_errno(-rc))
		class_note(" %s: errno %d (%s) is not a clean errno", what, -rc,
			   strerror(-rc));
	else if (want != ANY && want != SOME_ERR && -rc != want)
		class_note(" %s: errno %d (%s), want %s", what, -rc,
			   strerror(-rc), strerror(want));
	return 0;
}

/* ---- raw commands ------------------------------------------------------ */

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL uverbs-fuzz-no-hang: a command took over 20 s\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(1);
}

static int do_write(int fd, const void *buf, size_t len)
{
	ssize_t r;

	alarm(HANG_S);
	r = write(fd, buf, len);
	alarm(0);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EPROTO;
}

/*
 * Legacy command: CORE (starting with its response pointer, if any), then
 * DRV_LEN bytes of driver data (a multiple of 4); the response buffer holds
 * OUT_LEN bytes (core response, then driver response).
 */
static int legacy(int fd, uint32_t cmd, const void *core, size_t core_len,
		  const void *drv, size_t drv_len, size_t out_len)
{
	uint8_t buf[sizeof(struct ib_uverbs_cmd_hdr) + 256 + MAX_DRV];
	struct ib_uverbs_cmd_hdr hdr;
	size_t len = sizeof(hdr) + core_len + drv_len;

	hdr.command = cmd;
	hdr.in_words = len / 4;
	hdr.out_words = out_len / 4;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), core, core_len);
	if (drv_len)
		memcpy(buf + sizeof(hdr) + core_len, drv, drv_len);
	return do_write(fd, buf, len);
}

/* Extended command: lengths in multiples of 8. */
static int extended(int fd, uint32_t cmd, const void *core, size_t core_len,
		    const void *drv, size_t drv_len, uint64_t resp,
		    size_t out_len, size_t drv_out_len)
{
	uint8_t buf[sizeof(struct ib_uverbs_cmd_hdr) +
		    sizeof(struct ib_uverbs_ex_cmd_hdr) + 256 + MAX_DRV];
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex = {};
	size_t off = sizeof(hdr) + sizeof(ex);

	hdr.command = IB_USER_VERBS_CMD_FLAG_EXTENDED | cmd;
	hdr.in_words = core_len / 8;
	hdr.out_words = out_len / 8;
	ex.response = resp;
	ex.provider_in_words = drv_len / 8;
	ex.provider_out_words = drv_out_len / 8;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), &ex, sizeof(ex));
	memcpy(buf + off, core, core_len);
	if (drv_len)
		memcpy(buf + off + core_len, drv, drv_len);
	return do_write(fd, buf, off + core_len + drv_len);
}

static uint64_t ptr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* Response buffers: big enough for every core + driver response. */
static uint64_t resp_buf[64];

static int open_dev(void)
{
	int fd = open(devpath, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("FAIL uverbs-fuzz-open: %s: %s\n", devpath, strerror(errno));
		exit(1);
	}
	return fd;
}

/* GET_CONTEXT with driver request DRV/DRV_LEN and OUT_LEN response bytes. */
static int get_context(int fd, const void *drv, size_t drv_len, size_t out_len,
		       uint64_t resp)
{
	struct ib_uverbs_get_context c = { .response = resp };

	return legacy(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &c, sizeof(c), drv,
		      drv_len, out_len);
}

#define CTX_OUT	(sizeof(struct ib_uverbs_get_context_resp) + \
		 sizeof(struct kite_alloc_ucontext_resp))

/* GET_CONTEXT on a fresh file (one context per file). */
static int ctx_once(const void *drv, size_t drv_len, size_t out_len,
		    uint64_t resp)
{
	int fd = open_dev(), rc;

	rc = get_context(fd, drv, drv_len, out_len, resp);
	close(fd);
	return rc;
}

static int alloc_pd(int fd, const void *drv, size_t drv_len, size_t out_len,
		    uint64_t resp, uint32_t *pdh)
{
	struct ib_uverbs_alloc_pd c = { .response = resp };
	int rc;

	memset(resp_buf, 0, sizeof(resp_buf));
	rc = legacy(fd, IB_USER_VERBS_CMD_ALLOC_PD, &c, sizeof(c), drv, drv_len,
		    out_len);
	if (!rc && pdh)
		memcpy(pdh, resp_buf, sizeof(*pdh));	/* the handle comes first */
	return rc;
}

#define PD_OUT	(sizeof(struct ib_uverbs_alloc_pd_resp) + \
		 sizeof(struct kite_alloc_pd_resp))

static int dealloc_pd(int fd, uint32_t h)
{
	struct ib_uverbs_dealloc_pd c = { .pd_handle = h };

	return legacy(fd, IB_USER_VERBS_CMD_DEALLOC_PD, &c, sizeof(c), NULL, 0, 0);
}

#define CQ_OUT	(sizeof(struct ib_uverbs_create_cq_resp) + \
		 sizeof(struct kite_create_cq_resp))

static int create_cq(int fd, const void *drv, size_t drv_len, size_t out_len,
		     uint64_t resp, uint32_t *cqh)
{
	struct ib_uverbs_create_cq c = {
		.response = resp, .cqe = CQE, .comp_channel = -1,
	};
	int rc;

	memset(resp_buf, 0, sizeof(resp_buf));
	rc = legacy(fd, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c), drv, drv_len,
		    out_len);
	if (!rc && cqh)
		memcpy(cqh, resp_buf, sizeof(*cqh));	/* the handle comes first */
	return rc;
}

static int destroy_cq(int fd, uint32_t h)
{
	struct ib_uverbs_destroy_cq c = { .response = ptr(resp_buf), .cq_handle = h };

	return legacy(fd, IB_USER_VERBS_CMD_DESTROY_CQ, &c, sizeof(c), NULL, 0,
		      sizeof(struct ib_uverbs_destroy_cq_resp));
}

#define QP_OUT	(sizeof(struct ib_uverbs_create_qp_resp) + \
		 sizeof(struct kite_create_qp_resp))

static int g_fd;
static uint32_t g_pd, g_cq;

static int create_qp(int fd, const void *drv, size_t drv_len, size_t out_len,
		     uint64_t resp, uint32_t *qph)
{
	struct ib_uverbs_create_qp c = {
		.response = resp, .pd_handle = g_pd, .send_cq_handle = g_cq,
		.recv_cq_handle = g_cq, .max_send_wr = QP_WR,
		.max_recv_wr = QP_WR, .max_send_sge = 1, .max_recv_sge = 1,
		.qp_type = IB_QPT_RC,
	};
	int rc;

	memset(resp_buf, 0, sizeof(resp_buf));
	rc = legacy(fd, IB_USER_VERBS_CMD_CREATE_QP, &c, sizeof(c), drv, drv_len,
		    out_len);
	if (!rc && qph)
		memcpy(qph, resp_buf, sizeof(*qph));	/* the handle comes first */
	return rc;
}

static int destroy_qp(int fd, uint32_t h)
{
	struct ib_uverbs_destroy_qp c = { .response = ptr(resp_buf), .qp_handle = h };

	return legacy(fd, IB_USER_VERBS_CMD_DESTROY_QP, &c, sizeof(c), NULL, 0,
		      sizeof(struct ib_uverbs_destroy_qp_resp));
}

#define MR_OUT	sizeof(struct ib_uverbs_reg_mr_resp)

static int reg_mr(int fd, void *buf, const void *drv, size_t drv_len,
		  size_t out_len, uint32_t *mrh)
{
	struct ib_uverbs_reg_mr c = {
		.response = ptr(resp_buf), .start = ptr(buf), .length = PAGE,
		.hca_va = ptr(buf), .pd_handle = g_pd,
		.access_flags = ACCESS_LOCAL_WRITE,
	};
	int rc;

	memset(resp_buf, 0, sizeof(resp_buf));
	rc = legacy(fd, IB_USER_VERBS_CMD_REG_MR, &c, sizeof(c), drv, drv_len,
		    out_len);
	if (!rc && mrh)
		memcpy(mrh, resp_buf, sizeof(*mrh));	/* the handle comes first */
	return rc;
}

static int dereg_mr(int fd, uint32_t h)
{
	struct ib_uverbs_dereg_mr c = { .mr_handle = h };

	return legacy(fd, IB_USER_VERBS_CMD_DEREG_MR, &c, sizeof(c), NULL, 0, 0);
}

/* MODIFY_QP (legacy, no driver data in ib_core): to STATE with MASK. */
static int modify_qp(int fd, uint32_t qph, int state, uint32_t mask,
		     const void *drv, size_t drv_len)
{
	struct ib_uverbs_modify_qp c = {
		.qp_handle = qph, .attr_mask = mask, .qp_state = state,
		.port_num = 1, .qp_access_flags = 0,
	};

	return legacy(fd, IB_USER_VERBS_CMD_MODIFY_QP, &c, sizeof(c), drv,
		      drv_len, 0);
}

/* Extended MODIFY_QP: ib_core passes the provider words to the driver. */
static int ex_modify_qp(int fd, uint32_t qph, int state, uint32_t mask,
			const void *drv, size_t drv_len, size_t drv_out)
{
	struct ib_uverbs_ex_modify_qp c = {
		.base = { .qp_handle = qph, .attr_mask = mask,
			  .qp_state = state, .port_num = 1 },
	};

	return extended(fd, IB_USER_VERBS_EX_CMD_MODIFY_QP, &c, sizeof(c), drv,
			drv_len, ptr(resp_buf),
			sizeof(struct ib_uverbs_ex_modify_qp_resp), drv_out);
}

/* ---- rings ---------------------------------------------------------------- */

static void *cq_ring, *sq_ring, *rq_ring, *mr_buf, *unmapped, *ro_page;

static void *zpage(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		printf("FAIL uverbs-fuzz-setup: mmap: %s\n", strerror(errno));
		exit(1);
	}
	memset(p, 0, len);
	return p;
}

static struct kite_create_cq_req cq_req(void)
{
	struct kite_create_cq_req r = {
		.buf_va = ptr(cq_ring), .buf_len = PAGE,
	};

	return r;
}

static struct kite_create_qp_req qp_req(void)
{
	struct kite_create_qp_req r = {
		.sq_va = ptr(sq_ring), .sq_len = PAGE,
		.rq_va = ptr(rq_ring), .rq_len = PAGE,
	};

	return r;
}

/* CREATE_CQ with request R (DRV_LEN bytes of it); destroy what got created. */
static int cq_try(const void *r, size_t drv_len, size_t out_len, uint64_t resp)
{
	uint32_t h;
	int rc;

	rc = create_cq(g_fd, r, drv_len, out_len, resp, &h);
	if (!rc && resp == ptr(resp_buf))
		destroy_cq(g_fd, h);
	return rc;
}

static int qp_try(const void *r, size_t drv_len, size_t out_len, uint64_t resp)
{
	uint32_t h;
	int rc;

	rc = create_qp(g_fd, r, drv_len, out_len, resp, &h);
	if (!rc && resp == ptr(resp_buf))
		destroy_qp(g_fd, h);
	return rc;
}

static int mr_try(const void *drv, size_t drv_len, size_t out_len)
{
	uint32_t h;
	int rc;

	rc = reg_mr(g_fd, mr_buf, drv, drv_len, out_len, &h);
	if (!rc)
		dereg_mr(g_fd, h);
	return rc;
}

/* ---- device counts ---------------------------------------------------- */

static long hw_counter(const char *name)
{
	char path[256];
	long v = -1;
	FILE *f;

	usleep(50000);	/* hw_counters are cached for 10 ms */
	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", ibdev, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static void counts(long c[3])
{
	c[0] = hw_counter("num_cq");
	c[1] = hw_counter("num_qp");
	c[2] = hw_counter("num_mr");
}

static int find_dev(void)
{
	char path[128], name[64];
	FILE *f;
	int i;

	for (i = 0; i < 32; i++) {
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband_verbs/uverbs%d/ibdev", i);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f)) {
			name[strcspn(name, "\n")] = '\0';
			if (!strcmp(name, ibdev)) {
				fclose(f);
				snprintf(devpath, sizeof(devpath),
					 "/dev/infiniband/uverbs%d", i);
				return 0;
			}
		}
		fclose(f);
	}
	return -1;
}

/* ---- the classes -------------------------------------------------------- */

static uint8_t zeros[MAX_DRV];

/* GET_CONTEXT: the driver reads no request data; its response is 64 bytes. */
static void fuzz_ucontext(void)
{
	uint8_t junk[MAX_DRV] = {};
	size_t core = sizeof(struct ib_uverbs_get_context_resp);

	class_begin("uverbs-fuzz-ucontext-req-nonzero");
	junk[0] = 1;
	expect("4 bytes, first 1", ctx_once(junk, 4, CTX_OUT, ptr(resp_buf)), EINVAL);
	junk[0] = 0;
	junk[63] = 0x80;
	expect("64 bytes, last 0x80", ctx_once(junk, 64, CTX_OUT, ptr(resp_buf)), EINVAL);
	memset(junk, 0xff, sizeof(junk));
	expect("128 bytes 0xff", ctx_once(junk, MAX_DRV, CTX_OUT, ptr(resp_buf)), EINVAL);
	/* All-zero request data is "nothing asked": accepted. */
	expect("64 zero bytes", ctx_once(zeros, 64, CTX_OUT, ptr(resp_buf)), ANY);
	class_end();

	class_begin("uverbs-fuzz-ucontext-resp-short");
	expect("no response", ctx_once(NULL, 0, 0, ptr(resp_buf)), SOME_ERR);
	expect("core response - 4", ctx_once(NULL, 0, core - 4, ptr(resp_buf)), SOME_ERR);
	/* The driver response carries the doorbell page: it is required. */
	expect("driver response 0", ctx_once(NULL, 0, core, ptr(resp_buf)), EINVAL);
	expect("driver response - 8", ctx_once(NULL, 0, CTX_OUT - 8, ptr(resp_buf)), EINVAL);
	expect("response NULL", ctx_once(NULL, 0, CTX_OUT, 0), SOME_ERR);
	expect("response kernel address", ctx_once(NULL, 0, CTX_OUT, KERNEL_VA), SOME_ERR);
	expect("response unmapped", ctx_once(NULL, 0, CTX_OUT, ptr(unmapped)), SOME_ERR);
	class_end();
}

static void fuzz_pd(void)
{
	uint8_t junk[MAX_DRV] = {};
	size_t core = sizeof(struct ib_uverbs_alloc_pd_resp);
	uint32_t h;
	int rc;

	class_begin("uverbs-fuzz-pd-req-nonzero");
	junk[0] = 1;
	expect("4 bytes, first 1", alloc_pd(g_fd, junk, 4, PD_OUT, ptr(resp_buf), NULL), EINVAL);
	junk[0] = 0;
	junk[MAX_DRV - 1] = 1;
	expect("128 bytes, last 1", alloc_pd(g_fd, junk, MAX_DRV, PD_OUT, ptr(resp_buf), NULL), EINVAL);
	class_end();

	class_begin("uverbs-fuzz-pd-resp-short");
	expect("no response", alloc_pd(g_fd, NULL, 0, 0, ptr(resp_buf), NULL), SOME_ERR);
	rc = alloc_pd(g_fd, NULL, 0, core, ptr(resp_buf), &h);
	expect("driver response 0", rc, EINVAL);
	if (!rc)
		dealloc_pd(g_fd, h);
	expect("response NULL", alloc_pd(g_fd, NULL, 0, PD_OUT, 0, NULL), SOME_ERR);
	expect("response kernel address", alloc_pd(g_fd, NULL, 0, PD_OUT, KERNEL_VA, NULL), SOME_ERR);
	expect("response read-only", alloc_pd(g_fd, NULL, 0, PD_OUT, ptr(ro_page), NULL), SOME_ERR);
	class_end();
}

static void fuzz_cq(void)
{
	struct kite_create_cq_req r = cq_req();
	uint8_t big[MAX_DRV] = {};
	size_t n = sizeof(r), core = sizeof(struct ib_uverbs_create_cq_resp);

	class_begin("uverbs-fuzz-cq-req-short");
	expect("0 bytes", cq_try(NULL, 0, CQ_OUT, ptr(resp_buf)), EINVAL);
	expect("4 bytes", cq_try(&r, 4, CQ_OUT, ptr(resp_buf)), EINVAL);
	expect("8 bytes", cq_try(&r, 8, CQ_OUT, ptr(resp_buf)), EINVAL);
	expect("sizeof - 4", cq_try(&r, n - 4, CQ_OUT, ptr(resp_buf)), EINVAL);
	class_end();

	class_begin("uverbs-fuzz-cq-req-long-nonzero");
	memcpy(big, &r, n);
	expect("long, zero tail", cq_try(big, MAX_DRV, CQ_OUT, ptr(resp_buf)), ANY);
	big[n] = 1;
	expect("sizeof + 4, tail 1", cq_try(big, n + 4, CQ_OUT, ptr(resp_buf)), EINVAL);
	big[n] = 0;
	big[MAX_DRV - 1] = 0xff;
	expect("128 bytes, last 0xff", cq_try(big, MAX_DRV, CQ_OUT, ptr(resp_buf)), EINVAL);
	class_end();

	class_begin("uverbs-fuzz-cq-comp-mask-reserved");
	r = cq_req();
	r.comp_mask = 1;
	expect("comp_mask 1", cq_try(&r, n, CQ_OUT, ptr(resp_buf)), EINVAL);
	r.comp_mask = 0x80000000u;
	expect("comp_mask bit 31", cq_try(&r, n, CQ_OUT, ptr(resp_buf)), EINVAL);
	r = cq_req();
	r.reserved_20 = 1;
	expect("reserved_20", cq_try(&r, n, CQ_OUT, ptr(resp_buf)), EINVAL);
	class_end();

	class_begin("uverbs-fuzz-cq-buf-va");
	r = cq_req();
	r.buf_va = 0;
	expect("buf_va 0", cq_try(&r, n, CQ_OUT, ptr(resp_buf)), EINVAL);
	r.buf_va = ptr(cq_ring) + 8;
	expect("unaligned", cq_try(&r, n, CQ_OUT, ptr(resp_buf)), EINVAL);
	r.buf_va = KERNEL_VA;
	expect("kernel address", cq_try(&r, n, CQ_OUT, ptr(resp_buf)), SOME_ERR);
	r.buf_va = ptr(unmapped);
	expect("unmapped", cq_try(&r, n, CQ_OUT, ptr(resp_buf)), SOME_ERR);
	r.buf_va = TOP_VA;
	r.buf_len = ~0ull;
	expect("top of the address space", cq_try(&r, n, CQ_OUT, ptr(resp_buf)), SOME_ERR);
	class_end();

	class_begin("uverbs-fuzz-cq-buf-len");
	r = cq_req();
	r.buf_len = 0;
	expect("0", cq_try(&r, n, CQ_OUT, ptr(resp_buf)), EINVAL);
	r.buf_len = CQE * 32 - 1;
	expect("ring - 1", cq_try(&r, n, CQ_OUT, ptr(resp_buf)), EINVAL);
	/* Larger than the ring is allowed: only the ring is pinned. */
	r.buf_len = ~0ull;
	expect("2^64 - 1", cq_try(&r, n, CQ_OUT, ptr(resp_buf)), ANY);
	class_end();

	class_begin("uverbs-fuzz-cq-resp-short");
	r = cq_req();
	expect("no response", cq_try(&r, n, 0, ptr(resp_buf)), SOME_ERR);
	expect("driver response 0", cq_try(&r, n, core, ptr(resp_buf)), EINVAL);
	expect("driver response - 4", cq_try(&r, n, CQ_OUT - 4, ptr(resp_buf)), EINVAL);
	expect("response NULL", cq_try(&r, n, CQ_OUT, 0), SOME_ERR);
	expect("response kernel address", cq_try(&r, n, CQ_OUT, KERNEL_VA), SOME_ERR);
	expect("response read-only", cq_try(&r, n, CQ_OUT, ptr(ro_page)), SOME_ERR);
	class_end();
}

static void fuzz_qp(void)
{
	struct kite_create_qp_req r = qp_req();
	uint8_t big[MAX_DRV] = {};
	size_t n = sizeof(r), core = sizeof(struct ib_uverbs_create_qp_resp);

	class_begin("uverbs-fuzz-qp-req-short");
	expect("0 bytes", qp_try(NULL, 0, QP_OUT, ptr(resp_buf)), EINVAL);
	expect("4 bytes", qp_try(&r, 4, QP_OUT, ptr(resp_buf)), EINVAL);
	expect("8 bytes", qp_try(&r, 8, QP_OUT, ptr(resp_buf)), EINVAL);
	expect("sizeof - 4", qp_try(&r, n - 4, QP_OUT, ptr(resp_buf)), EINVAL);
	class_end();

	class_begin("uverbs-fuzz-qp-req-long-nonzero");
	memcpy(big, &r, n);
	expect("long, zero tail", qp_try(big, MAX_DRV, QP_OUT, ptr(resp_buf)), ANY);
	big[n] = 1;
	expect("sizeof + 4, tail 1", qp_try(big, n + 4, QP_OUT, ptr(resp_buf)), EINVAL);
	big[n] = 0;
	big[MAX_DRV - 1] = 0xff;
	expect("128 bytes, last 0xff", qp_try(big, MAX_DRV, QP_OUT, ptr(resp_buf)), EINVAL);
	class_end();

	class_begin("uverbs-fuzz-qp-comp-mask-reserved");
	r = qp_req();
	r.comp_mask = 1;
	expect("comp_mask 1", qp_try(&r, n, QP_OUT, ptr(resp_buf)), EINVAL);
	r = qp_req();
	r.reserved_20 = 0x10000;
	expect("reserved_20", qp_try(&r, n, QP_OUT, ptr(resp_buf)), EINVAL);
	class_end();

	class_begin("uverbs-fuzz-qp-buf-va");
	r = qp_req();
	r.sq_va = 0;
	expect("sq_va 0", qp_try(&r, n, QP_OUT, ptr(resp_buf)), EINVAL);
	r = qp_req();
	r.rq_va = 0;
	expect("rq_va 0", qp_try(&r, n, QP_OUT, ptr(resp_buf)), EINVAL);
	r = qp_req();
	r.sq_va += 64;
	expect("sq unaligned", qp_try(&r, n, QP_OUT, ptr(resp_buf)), EINVAL);
	r = qp_req();
	r.rq_va += 4;
	expect("rq unaligned", qp_try(&r, n, QP_OUT, ptr(resp_buf)), EINVAL);
	r = qp_req();
	r.sq_va = KERNEL_VA;
	expect("sq kernel address", qp_try(&r, n, QP_OUT, ptr(resp_buf)), SOME_ERR);
	r = qp_req();
	r.rq_va = KERNEL_VA;
	expect("rq kernel address", qp_try(&r, n, QP_OUT, ptr(resp_buf)), SOME_ERR);
	r = qp_req();
	r.rq_va = ptr(unmapped);
	expect("rq unmapped (sq pinned first)", qp_try(&r, n, QP_OUT, ptr(resp_buf)), SOME_ERR);
	r = qp_req();
	r.sq_va = TOP_VA;
	r.sq_len = ~0ull;
	expect("sq at the top", qp_try(&r, n, QP_OUT, ptr(resp_buf)), SOME_ERR);
	class_end();

	class_begin("uverbs-fuzz-qp-buf-len");
	r = qp_req();
	r.sq_len = 0;
	expect("sq_len 0", qp_try(&r, n, QP_OUT, ptr(resp_buf)), EINVAL);
	r = qp_req();
	r.rq_len = 1;
	expect("rq_len 1", qp_try(&r, n, QP_OUT, ptr(resp_buf)), EINVAL);
	r = qp_req();
	r.sq_len = ~0ull;
	r.rq_len = ~0ull;
	expect("2^64 - 1", qp_try(&r, n, QP_OUT, ptr(resp_buf)), ANY);
	class_end();

	class_begin("uverbs-fuzz-qp-resp-short");
	r = qp_req();
	expect("no response", qp_try(&r, n, 0, ptr(resp_buf)), SOME_ERR);
	expect("driver response 0", qp_try(&r, n, core, ptr(resp_buf)), EINVAL);
	expect("driver response - 4", qp_try(&r, n, QP_OUT - 4, ptr(resp_buf)), EINVAL);
	expect("response NULL", qp_try(&r, n, QP_OUT, 0), SOME_ERR);
	expect("response kernel address", qp_try(&r, n, QP_OUT, KERNEL_VA), SOME_ERR);
	expect("response read-only", qp_try(&r, n, QP_OUT, ptr(ro_page)), SOME_ERR);
	class_end();
}

static void fuzz_mr_modify(uint32_t qph)
{
	uint8_t junk[MAX_DRV] = {};

	class_begin("uverbs-fuzz-reg-mr-udata");
	expect("zero tail", mr_try(zeros, 64, MR_OUT), ANY);
	junk[0] = 1;
	expect("4 bytes, first 1", mr_try(junk, 4, MR_OUT), EINVAL);
	junk[0] = 0;
	junk[MAX_DRV - 1] = 1;
	expect("128 bytes, last 1", mr_try(junk, MAX_DRV, MR_OUT), EINVAL);
	expect("response short", mr_try(NULL, 0, MR_OUT - 4), SOME_ERR);
	class_end();

	/*
	 * Legacy MODIFY_QP has no driver data in ib_core: trailing bytes are
	 * ignored there. The extended one passes them to the driver.
	 */
	class_begin("uverbs-fuzz-modify-qp-udata");
	memset(junk, 0xa5, sizeof(junk));
	expect("legacy, 0xa5 tail", modify_qp(g_fd, qph, QPS_INIT, QP_STATE, junk, 64), ANY);
	expect("ex, zero tail", ex_modify_qp(g_fd, qph, QPS_INIT, QP_STATE, zeros, 64, 0), ANY);
	expect("ex, 0xa5 tail", ex_modify_qp(g_fd, qph, QPS_INIT, QP_STATE, junk, 8, 0), EINVAL);
	junk[0] = 0;
	memset(junk, 0, 56);
	expect("ex, 64 bytes, last 0xa5", ex_modify_qp(g_fd, qph, QPS_INIT, QP_STATE, junk, 64, 0), EINVAL);
	expect("ex, driver response 8", ex_modify_qp(g_fd, qph, QPS_INIT, QP_STATE, NULL, 0, 8), ANY);
	class_end();
}

/* ---- RESIZE_CQ, CREATE_SRQ, MODIFY_SRQ, CREATE_AH, doorbell records ---- */

#define RESIZE_OUT	sizeof(struct ib_uverbs_resize_cq_resp)
#define SRQ_WR		3	/* depth 4: one slot always stays free */
#define SRQ_RING	(4 * 32)	/* 4 slots of 16 + 1 SGE * 16 bytes */
#define SRQ_OUT	(sizeof(struct ib_uverbs_create_srq_resp) + \
		 sizeof(struct kite_create_srq_resp))
#define AH_OUT	(sizeof(struct ib_uverbs_create_ah_resp) + \
		 sizeof(struct kite_create_ah_resp))
#define IB_SRQ_LIMIT	(1u << 1)

static void *rz_ring, *srq_ring, *dbrec_page;

static int resize_cq(int fd, uint32_t cqh, const void *drv, size_t drv_len,
		     size_t out_len, uint64_t resp)
{
	struct ib_uverbs_resize_cq c = {
		.response = resp, .cq_handle = cqh, .cqe = CQE,
	};

	return legacy(fd, IB_USER_VERBS_CMD_RESIZE_CQ, &c, sizeof(c), drv,
		      drv_len, out_len);
}

static struct kite_resize_cq_req rz_req(void)
{
	struct kite_resize_cq_req r = {
		.buf_va = ptr(rz_ring), .buf_len = PAGE,
	};

	return r;
}

static int create_srq(int fd, const void *drv, size_t drv_len, size_t out_len,
		      uint64_t resp, uint32_t *srqh)
{
	struct ib_uverbs_create_srq c = {
		.response = resp, .pd_handle = g_pd, .max_wr = SRQ_WR,
		.max_sge = 1,
	};
	int rc;

	memset(resp_buf, 0, sizeof(resp_buf));
	rc = legacy(fd, IB_USER_VERBS_CMD_CREATE_SRQ, &c, sizeof(c), drv,
		    drv_len, out_len);
	if (!rc && srqh)
		memcpy(srqh, resp_buf, sizeof(*srqh));	/* the handle comes first */
	return rc;
}

static int destroy_srq(int fd, uint32_t h)
{
	struct ib_uverbs_destroy_srq c = { .response = ptr(resp_buf), .srq_handle = h };

	return legacy(fd, IB_USER_VERBS_CMD_DESTROY_SRQ, &c, sizeof(c), NULL, 0,
		      sizeof(struct ib_uverbs_destroy_srq_resp));
}

static int modify_srq(int fd, uint32_t h, const void *drv, size_t drv_len)
{
	struct ib_uverbs_modify_srq c = {
		.srq_handle = h, .attr_mask = IB_SRQ_LIMIT, .srq_limit = 1,
	};

	return legacy(fd, IB_USER_VERBS_CMD_MODIFY_SRQ, &c, sizeof(c), drv,
		      drv_len, 0);
}

static struct kite_create_srq_req srq_req(void)
{
	struct kite_create_srq_req r = {
		.buf_va = ptr(srq_ring), .buf_len = PAGE,
	};

	return r;
}

static int srq_try(const void *r, size_t drv_len, size_t out_len,
		   uint64_t resp)
{
	uint32_t h;
	int rc;

	rc = create_srq(g_fd, r, drv_len, out_len, resp, &h);
	if (!rc && resp == ptr(resp_buf))
		destroy_srq(g_fd, h);
	return rc;
}

/*
 * CREATE_AH of a UD address to an IPv6 multicast group from GID 0: ib_core
 * derives the MAC from the group, so no neighbour has to answer.
 */
static int create_ah(int fd, const void *drv, size_t drv_len, size_t out_len,
		     uint64_t resp, uint32_t *ahh)
{
	struct ib_uverbs_create_ah c = {
		.response = resp, .pd_handle = g_pd,
		.attr = { .grh = { .dgid = { 0xff, 0x0e, [15] = 1 },
				   .hop_limit = 1 },
			  .is_global = 1, .port_num = 1 },
	};
	int rc;

	memset(resp_buf, 0, sizeof(resp_buf));
	rc = legacy(fd, IB_USER_VERBS_CMD_CREATE_AH, &c, sizeof(c), drv,
		    drv_len, out_len);
	if (!rc && ahh)
		memcpy(ahh, resp_buf, sizeof(*ahh));	/* the handle comes first */
	return rc;
}

static int destroy_ah(int fd, uint32_t h)
{
	struct ib_uverbs_destroy_ah c = { .ah_handle = h };

	return legacy(fd, IB_USER_VERBS_CMD_DESTROY_AH, &c, sizeof(c), NULL, 0, 0);
}

static int ah_try(const void *drv, size_t drv_len, size_t out_len,
		  uint64_t resp)
{
	uint32_t h;
	int rc;

	rc = create_ah(g_fd, drv, drv_len, out_len, resp, &h);
	if (!rc && resp == ptr(resp_buf))
		destroy_ah(g_fd, h);
	return rc;
}

/* RESIZE_CQ of a CQ of its own: the request names the new ring. */
static void fuzz_resize_cq(void)
{
	struct kite_create_cq_req cr = cq_req();
	struct kite_resize_cq_req r = rz_req();
	uint8_t big[MAX_DRV] = {};
	size_t n = sizeof(r);
	uint32_t h;
	int rc;

	rc = create_cq(g_fd, &cr, sizeof(cr), CQ_OUT, ptr(resp_buf), &h);
	if (rc) {
		printf("FAIL uverbs-fuzz-resize-cq-req: CREATE_CQ: %s\n",
		       strerror(-rc));
		printf("FAIL uverbs-fuzz-resize-cq-buf: CREATE_CQ: %s\n",
		       strerror(-rc));
		failures += 2;
		return;
	}

	class_begin("uverbs-fuzz-resize-cq-req");
	expect("0 bytes", resize_cq(g_fd, h, NULL, 0, RESIZE_OUT, ptr(resp_buf)), EINVAL);
	expect("4 bytes", resize_cq(g_fd, h, &r, 4, RESIZE_OUT, ptr(resp_buf)), EINVAL);
	expect("8 bytes", resize_cq(g_fd, h, &r, 8, RESIZE_OUT, ptr(resp_buf)), EINVAL);
	expect("sizeof - 4", resize_cq(g_fd, h, &r, n - 4, RESIZE_OUT, ptr(resp_buf)), EINVAL);
	memcpy(big, &r, n);
	big[n] = 1;
	expect("sizeof + 4, tail 1", resize_cq(g_fd, h, big, n + 4, RESIZE_OUT, ptr(resp_buf)), EINVAL);
	r.comp_mask = 1;
	expect("comp_mask 1", resize_cq(g_fd, h, &r, n, RESIZE_OUT, ptr(resp_buf)), EINVAL);
	r = rz_req();
	r.reserved_20 = 1;
	expect("reserved_20", resize_cq(g_fd, h, &r, n, RESIZE_OUT, ptr(resp_buf)), EINVAL);
	class_end();

	class_begin("uverbs-fuzz-resize-cq-buf");
	r = rz_req();
	r.buf_va = 0;
	expect("buf_va 0", resize_cq(g_fd, h, &r, n, RESIZE_OUT, ptr(resp_buf)), EINVAL);
	r.buf_va = ptr(rz_ring) + 8;
	expect("unaligned", resize_cq(g_fd, h, &r, n, RESIZE_OUT, ptr(resp_buf)), EINVAL);
	r.buf_va = KERNEL_VA;
	expect("kernel address", resize_cq(g_fd, h, &r, n, RESIZE_OUT, ptr(resp_buf)), SOME_ERR);
	r.buf_va = ptr(unmapped);
	expect("unmapped", resize_cq(g_fd, h, &r, n, RESIZE_OUT, ptr(resp_buf)), SOME_ERR);
	r.buf_va = TOP_VA;
	r.buf_len = ~0ull;
	expect("top of the address space", resize_cq(g_fd, h, &r, n, RESIZE_OUT, ptr(resp_buf)), SOME_ERR);
	r = rz_req();
	r.buf_len = 0;
	expect("buf_len 0", resize_cq(g_fd, h, &r, n, RESIZE_OUT, ptr(resp_buf)), EINVAL);
	r.buf_len = CQE * 32 - 1;
	expect("buf_len ring - 1", resize_cq(g_fd, h, &r, n, RESIZE_OUT, ptr(resp_buf)), EINVAL);
	r = rz_req();
	expect("valid", resize_cq(g_fd, h, &r, n, RESIZE_OUT, ptr(resp_buf)), MUST_OK);
	expect("destroy after", destroy_cq(g_fd, h), MUST_OK);
	class_end();
}

static void fuzz_srq(void)
{
	struct kite_create_srq_req r = srq_req();
	uint8_t big[MAX_DRV] = {}, junk[MAX_DRV] = {};
	size_t n = sizeof(r), core = sizeof(struct ib_uverbs_create_srq_resp);
	uint32_t h;

	class_begin("uverbs-fuzz-srq-req");
	expect("valid", srq_try(&r, n, SRQ_OUT, ptr(resp_buf)), MUST_OK);
	expect("0 bytes", srq_try(NULL, 0, SRQ_OUT, ptr(resp_buf)), EINVAL);
	expect("4 bytes", srq_try(&r, 4, SRQ_OUT, ptr(resp_buf)), EINVAL);
	expect("8 bytes", srq_try(&r, 8, SRQ_OUT, ptr(resp_buf)), EINVAL);
	expect("sizeof - 4", srq_try(&r, n - 4, SRQ_OUT, ptr(resp_buf)), EINVAL);
	memcpy(big, &r, n);
	expect("long, zero tail", srq_try(big, MAX_DRV, SRQ_OUT, ptr(resp_buf)), MUST_OK);
	big[n] = 1;
	expect("sizeof + 4, tail 1", srq_try(big, n + 4, SRQ_OUT, ptr(resp_buf)), EINVAL);
	r.comp_mask = 1;
	expect("comp_mask 1", srq_try(&r, n, SRQ_OUT, ptr(resp_buf)), EINVAL);
	r = srq_req();
	r.reserved_20 = 1;
	expect("reserved_20", srq_try(&r, n, SRQ_OUT, ptr(resp_buf)), EINVAL);
	class_end();

	class_begin("uverbs-fuzz-srq-buf");
	r = srq_req();
	r.buf_va = 0;
	expect("buf_va 0", srq_try(&r, n, SRQ_OUT, ptr(resp_buf)), EINVAL);
	r.buf_va = ptr(srq_ring) + 8;
	expect("unaligned", srq_try(&r, n, SRQ_OUT, ptr(resp_buf)), EINVAL);
	r.buf_va = KERNEL_VA;
	expect("kernel address", srq_try(&r, n, SRQ_OUT, ptr(resp_buf)), SOME_ERR);
	r.buf_va = ptr(unmapped);
	expect("unmapped", srq_try(&r, n, SRQ_OUT, ptr(resp_buf)), SOME_ERR);
	r = srq_req();
	r.buf_len = 0;
	expect("buf_len 0", srq_try(&r, n, SRQ_OUT, ptr(resp_buf)), EINVAL);
	r.buf_len = SRQ_RING - 1;
	expect("buf_len ring - 1", srq_try(&r, n, SRQ_OUT, ptr(resp_buf)), EINVAL);
	class_end();

	class_begin("uverbs-fuzz-srq-resp-short");
	r = srq_req();
	expect("driver response 0", srq_try(&r, n, core, ptr(resp_buf)), EINVAL);
	expect("driver response - 4", srq_try(&r, n, SRQ_OUT - 4, ptr(resp_buf)), EINVAL);
	expect("response NULL", srq_try(&r, n, SRQ_OUT, 0), SOME_ERR);
	expect("response read-only", srq_try(&r, n, SRQ_OUT, ptr(ro_page)), SOME_ERR);
	class_end();

	/* MODIFY_SRQ carries no driver data: any request byte must be zero. */
	class_begin("uverbs-fuzz-modify-srq-udata");
	r = srq_req();
	if (expect("CREATE_SRQ", create_srq(g_fd, &r, n, SRQ_OUT, ptr(resp_buf), &h),
		   MUST_OK)) {
		expect("zero tail", modify_srq(g_fd, h, zeros, 64), MUST_OK);
		junk[0] = 1;
		expect("4 bytes, first 1", modify_srq(g_fd, h, junk, 4), EINVAL);
		junk[0] = 0;
		junk[MAX_DRV - 1] = 1;
		expect("128 bytes, last 1", modify_srq(g_fd, h, junk, MAX_DRV), EINVAL);
		expect("DESTROY_SRQ", destroy_srq(g_fd, h), MUST_OK);
	}
	class_end();
}

/* CREATE_AH: no request data; the response is struct kite_create_ah_resp. */
static void fuzz_ah(void)
{
	uint8_t junk[MAX_DRV] = {};
	size_t core = sizeof(struct ib_uverbs_create_ah_resp);

	class_begin("uverbs-fuzz-ah-udata");
	expect("valid", ah_try(NULL, 0, AH_OUT, ptr(resp_buf)), MUST_OK);
	expect("zero request", ah_try(zeros, 64, AH_OUT, ptr(resp_buf)), MUST_OK);
	junk[0] = 1;
	expect("4 bytes, first 1", ah_try(junk, 4, AH_OUT, ptr(resp_buf)), EINVAL);
	junk[0] = 0;
	junk[MAX_DRV - 1] = 1;
	expect("128 bytes, last 1", ah_try(junk, MAX_DRV, AH_OUT, ptr(resp_buf)), EINVAL);
	expect("driver response 0", ah_try(NULL, 0, core, ptr(resp_buf)), EINVAL);
	expect("driver response - 4", ah_try(NULL, 0, AH_OUT - 4, ptr(resp_buf)), EINVAL);
	expect("response NULL", ah_try(NULL, 0, AH_OUT, 0), SOME_ERR);
	expect("response read-only", ah_try(NULL, 0, AH_OUT, ptr(ro_page)), SOME_ERR);
	class_end();
}

/*
 * Doorbell records of CQs and QPs: the DBREC bit with a record the driver
 * cannot pin writable (the device writes into it) is refused, whether or
 * not the context was offered records.
 */
static void fuzz_dbrec(void)
{
	static const struct { const char *what; uint64_t va; } bad[] = {
		{ "dbrec_va 0", 0 },
		{ "unaligned", 4 },
		{ "kernel address", KERNEL_VA },
		{ "unmapped", 0 },
		{ "read-only", 0 },
	};
	struct kite_create_cq_req cr;
	struct kite_create_qp_req qr;
	char what[64];
	uint64_t va;
	size_t i;

	class_begin("uverbs-fuzz-dbrec-va");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		va = bad[i].va;
		if (i == 1)
			va = ptr(dbrec_page) + 4;
		else if (i == 3)
			va = ptr(unmapped);
		else if (i == 4)
			va = ptr(ro_page);
		cr = cq_req();
		cr.comp_mask = KITE_CREATE_CQ_REQ_DBREC;
		cr.dbrec_va = va;
		snprintf(what, sizeof(what), "CQ %s", bad[i].what);
		expect(what, cq_try(&cr, sizeof(cr), CQ_OUT, ptr(resp_buf)), SOME_ERR);
		qr = qp_req();
		qr.comp_mask = KITE_CREATE_QP_REQ_DBREC;
		qr.dbrec_va = va;
		snprintf(what, sizeof(what), "QP %s", bad[i].what);
		expect(what, qp_try(&qr, sizeof(qr), QP_OUT, ptr(resp_buf)), SOME_ERR);
	}
	class_end();
}

/*
 * Seeded random garbage: a command, a driver request of 4 .. MAX_DRV bytes
 * of random data whose first byte is non-zero (a comp_mask or a byte that
 * must be zero), a response of random length. None may succeed.
 */
static void fuzz_random(unsigned int seed, uint32_t qph)
{
	uint8_t junk[MAX_DRV];
	time_t end = time(NULL) + RANDOM_MAX_S;
	int i, j, len, out, rc;
	char what[64];
	uint32_t h;

	class_begin("uverbs-fuzz-random-x2000");
	srandom(seed);
	for (i = 0; i < RANDOM_CMDS && time(NULL) < end; i++) {
		for (j = 0; j < MAX_DRV; j++)
			junk[j] = random();
		junk[0] |= 1;
		len = 4 * (1 + random() % (MAX_DRV / 4));
		out = random() % 2;
		snprintf(what, sizeof(what), "#%d seed %u", i, seed);
		switch (random() % 6) {
		case 0:
			rc = ctx_once(junk, len, out ? CTX_OUT : (size_t)(random() % 18) * 4, ptr(resp_buf));
			break;
		case 1:
			rc = alloc_pd(g_fd, junk, len, out ? PD_OUT : (size_t)(random() % 4) * 4,
				      ptr(resp_buf), &h);
			if (!rc)
				dealloc_pd(g_fd, h);
			break;
		case 2:
			rc = cq_try(junk, len, out ? CQ_OUT : (size_t)(random() % 7) * 4, ptr(resp_buf));
			break;
		case 3:
			rc = qp_try(junk, len, out ? QP_OUT : (size_t)(random() % 15) * 4, ptr(resp_buf));
			break;
		case 4:
			rc = mr_try(junk, len, out ? MR_OUT : (size_t)(random() % 4) * 4);
			break;
		default:
			rc = ex_modify_qp(g_fd, qph, QPS_INIT, QP_STATE, junk,
					  len & ~7 ? len & ~7 : 8, 0);
			break;
		}
		expect(what, rc, SOME_ERR);
	}
	if (i < RANDOM_CMDS)
		class_note(" only %d commands in %d s", i, RANDOM_MAX_S);
	printf("info: %d random commands, seed %u\n", i, seed);
	class_end();
}

int main(int argc, char **argv)
{
	struct kite_create_cq_req cr;
	struct kite_create_qp_req qr;
	long before[3], after[3];
	unsigned int seed = 1;
	uint32_t pd2, cqh, qph, qph2, mrh;
	char bad[300] = "";
	int rc;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s DEV [SEED]\n", argv[0]);
		return 2;
	}
	ibdev = argv[1];
	if (argc == 3)
		seed = strtoul(argv[2], NULL, 0);
	signal(SIGALRM, on_alarm);
	if (find_dev()) {
		printf("FAIL uverbs-fuzz-open: no uverbs device for %s\n", ibdev);
		return 1;
	}
	cq_ring = zpage(PAGE);
	sq_ring = zpage(PAGE);
	rq_ring = zpage(PAGE);
	mr_buf = zpage(PAGE);
	unmapped = zpage(PAGE);
	munmap(unmapped, PAGE);
	ro_page = zpage(PAGE);
	mprotect(ro_page, PAGE, PROT_READ);
	rz_ring = zpage(PAGE);
	srq_ring = zpage(PAGE);
	dbrec_page = zpage(PAGE);
	counts(before);

	/* Baseline: every valid command works as built here. */
	g_fd = open_dev();
	rc = get_context(g_fd, NULL, 0, CTX_OUT, ptr(resp_buf));
	if (rc)
		snprintf(bad, sizeof(bad), " GET_CONTEXT: %s", strerror(-rc));
	else if ((rc = alloc_pd(g_fd, NULL, 0, PD_OUT, ptr(resp_buf), &g_pd)))
		snprintf(bad, sizeof(bad), " ALLOC_PD: %s", strerror(-rc));
	else if ((cr = cq_req(), rc = create_cq(g_fd, &cr, sizeof(cr), CQ_OUT,
						ptr(resp_buf), &g_cq)))
		snprintf(bad, sizeof(bad), " CREATE_CQ: %s", strerror(-rc));
	else if ((qr = qp_req(), rc = create_qp(g_fd, &qr, sizeof(qr), QP_OUT,
						ptr(resp_buf), &qph)))
		snprintf(bad, sizeof(bad), " CREATE_QP: %s", strerror(-rc));
	else if ((rc = reg_mr(g_fd, mr_buf, NULL, 0, MR_OUT, &mrh)) ||
		 (rc = dereg_mr(g_fd, mrh)))
		snprintf(bad, sizeof(bad), " REG/DEREG_MR: %s", strerror(-rc));
	else if ((rc = ex_modify_qp(g_fd, qph, QPS_INIT,
				    QP_STATE | QP_PKEY | QP_PORT | QP_ACCESS,
				    NULL, 0, 0)))
		snprintf(bad, sizeof(bad), " EX_MODIFY_QP to INIT: %s", strerror(-rc));
	else if ((rc = modify_qp(g_fd, qph, QPS_INIT, QP_STATE, NULL, 0)))
		snprintf(bad, sizeof(bad), " MODIFY_QP INIT->INIT: %s", strerror(-rc));
	if (bad[0]) {
		printf("FAIL uverbs-fuzz-baseline:%s\n", bad);
		return 1;
	}
	printf("ok uverbs-fuzz-baseline\n");

	fuzz_ucontext();
	fuzz_pd();
	fuzz_cq();
	fuzz_qp();
	fuzz_mr_modify(qph);
	fuzz_resize_cq();
	fuzz_srq();
	fuzz_ah();
	fuzz_dbrec();
	fuzz_random(seed, qph);

	/* The context still works: a new PD, CQ and QP, then all destroyed. */
	bad[0] = '\0';
	cr = cq_req();
	qr = qp_req();
	if ((rc = alloc_pd(g_fd, NULL, 0, PD_OUT, ptr(resp_buf), &pd2)) ||
	    (rc = dealloc_pd(g_fd, pd2)))
		snprintf(bad, sizeof(bad), " PD: %s", strerror(-rc));
	else if ((rc = destroy_qp(g_fd, qph)))
		snprintf(bad, sizeof(bad), " DESTROY_QP: %s", strerror(-rc));
	else if ((rc = destroy_cq(g_fd, g_cq)))
		snprintf(bad, sizeof(bad), " DESTROY_CQ: %s", strerror(-rc));
	else if ((rc = create_cq(g_fd, &cr, sizeof(cr), CQ_OUT, ptr(resp_buf), &cqh)))
		snprintf(bad, sizeof(bad), " CREATE_CQ: %s", strerror(-rc));
	else if ((g_cq = cqh, rc = create_qp(g_fd, &qr, sizeof(qr), QP_OUT,
					     ptr(resp_buf), &qph2)))
		snprintf(bad, sizeof(bad), " CREATE_QP: %s", strerror(-rc));
	else if ((rc = destroy_qp(g_fd, qph2)) || (rc = destroy_cq(g_fd, cqh)) ||
		 (rc = dealloc_pd(g_fd, g_pd)))
		snprintf(bad, sizeof(bad), " destroy: %s", strerror(-rc));
	if (bad[0]) {
		printf("FAIL uverbs-fuzz-state-intact:%s\n", bad);
		failures++;
	} else {
		printf("ok uverbs-fuzz-state-intact\n");
	}

	close(g_fd);
	counts(after);
	if (before[0] < 0 || before[1] < 0 || before[2] < 0 ||
	    memcmp(before, after, sizeof(before))) {
		printf("FAIL uverbs-fuzz-counts: num_cq %ld -> %ld, num_qp %ld -> %ld, num_mr %ld -> %ld\n",
		       before[0], after[0], before[1], after[1], before[2], after[2]);
		failures++;
	} else {
		printf("ok uverbs-fuzz-counts\n");
	}
	fflush(stdout);
	return failures ? 1 : 0;
}
