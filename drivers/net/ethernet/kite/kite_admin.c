// SPDX-License-Identifier: GPL-2.0
/*
 * Kite admin queue: command submission, interrupt-driven completion with a
 * timeout, and the device status to errno mapping.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/stringify.h>

#include "kite.h"
#include "kite_trace.h"

static unsigned int admin_timeout_ms = KITE_ADMIN_DEF_TIMEOUT_MS;
module_param(admin_timeout_ms, uint, 0644);
MODULE_PARM_DESC(admin_timeout_ms,
		 "Admin command timeout in milliseconds (default "
		 __stringify(KITE_ADMIN_DEF_TIMEOUT_MS) ")");

/**
 * kite_admin_timeout_ms() - current admin command timeout
 *
 * Return: the timeout in milliseconds, at least 1.
 */
unsigned int kite_admin_timeout_ms(void)
{
	return max(READ_ONCE(admin_timeout_ms), 1U);
}

static const char * const kite_opcode_names[] = {
	[KITE_CMD_QUERY_DEVICE] = "QUERY_DEVICE",
	[KITE_CMD_QUERY_PORT] = "QUERY_PORT",
	[KITE_CMD_SET_PORT] = "SET_PORT",
	[KITE_CMD_CREATE_EQ] = "CREATE_EQ",
	[KITE_CMD_DESTROY_EQ] = "DESTROY_EQ",
	[KITE_CMD_ALLOC_UCTX] = "ALLOC_UCTX",
	[KITE_CMD_DEALLOC_UCTX] = "DEALLOC_UCTX",
	[KITE_CMD_ALLOC_PD] = "ALLOC_PD",
	[KITE_CMD_DEALLOC_PD] = "DEALLOC_PD",
	[KITE_CMD_CREATE_CQ] = "CREATE_CQ",
	[KITE_CMD_MODIFY_CQ] = "MODIFY_CQ",
	[KITE_CMD_QUERY_CQ] = "QUERY_CQ",
	[KITE_CMD_DESTROY_CQ] = "DESTROY_CQ",
	[KITE_CMD_CREATE_SRQ] = "CREATE_SRQ",
	[KITE_CMD_MODIFY_SRQ] = "MODIFY_SRQ",
	[KITE_CMD_QUERY_SRQ] = "QUERY_SRQ",
	[KITE_CMD_DESTROY_SRQ] = "DESTROY_SRQ",
	[KITE_CMD_CREATE_QP] = "CREATE_QP",
	[KITE_CMD_MODIFY_QP] = "MODIFY_QP",
	[KITE_CMD_QUERY_QP] = "QUERY_QP",
	[KITE_CMD_DESTROY_QP] = "DESTROY_QP",
	[KITE_CMD_QUERY_QP_STATS] = "QUERY_QP_STATS",
	[KITE_CMD_REG_MR] = "REG_MR",
	[KITE_CMD_DEREG_MR] = "DEREG_MR",
	[KITE_CMD_ALLOC_MR] = "ALLOC_MR",
	[KITE_CMD_REREG_MR] = "REREG_MR",
	[KITE_CMD_ALLOC_MW] = "ALLOC_MW",
	[KITE_CMD_DEALLOC_MW] = "DEALLOC_MW",
	[KITE_CMD_ADD_GID] = "ADD_GID",
	[KITE_CMD_DEL_GID] = "DEL_GID",
	[KITE_CMD_ATTACH_MCAST] = "ATTACH_MCAST",
	[KITE_CMD_DETACH_MCAST] = "DETACH_MCAST",
	[KITE_CMD_QUERY_STATS] = "QUERY_STATS",
};

/**
 * kite_opcode_name() - printable name of an admin opcode
 * @opcode: enum kite_aq_opcode value
 *
 * Return: the name, or "UNKNOWN".
 */
const char *kite_opcode_name(u8 opcode)
{
	if (opcode < ARRAY_SIZE(kite_opcode_names) &&
	    kite_opcode_names[opcode])
		return kite_opcode_names[opcode];
	return "UNKNOWN";
}

static const struct {
	const char *name;
	int err;
} kite_status_map[] = {
	[KITE_STS_OK] = { "OK", 0 },
	[KITE_STS_BAD_OPCODE] = { "BAD_OPCODE", -EOPNOTSUPP },
	[KITE_STS_BAD_PARAM] = { "BAD_PARAM", -EINVAL },
	[KITE_STS_NO_RESOURCES] = { "NO_RESOURCES", -ENOMEM },
	[KITE_STS_BAD_HANDLE] = { "BAD_HANDLE", -ENOENT },
	[KITE_STS_BUSY] = { "BUSY", -EBUSY },
	[KITE_STS_BAD_STATE] = { "BAD_STATE", -EINVAL },
	[KITE_STS_DMA_ERROR] = { "DMA_ERROR", -EIO },
	[KITE_STS_NOT_SUPPORTED] = { "NOT_SUPPORTED", -EOPNOTSUPP },
	[KITE_STS_PERMISSION] = { "PERMISSION", -EPERM },
	[KITE_STS_INTERNAL] = { "INTERNAL", -EIO },
	[KITE_STS_EXISTS] = { "EXISTS", -EEXIST },
};

/**
 * kite_status_name() - printable name of a completion status
 * @status: enum kite_aq_status value
 *
 * Return: the name, or "UNKNOWN".
 */
const char *kite_status_name(u8 status)
{
	if (status < ARRAY_SIZE(kite_status_map))
		return kite_status_map[status].name;
	return "UNKNOWN";
}

/**
 * kite_status_to_errno() - map a completion status to an errno
 * @status: enum kite_aq_status value
 *
 * Return: 0 for KITE_STS_OK, a negative errno otherwise; unknown statuses
 * map to -EIO.
 */
int kite_status_to_errno(u8 status)
{
	if (status < ARRAY_SIZE(kite_status_map))
		return kite_status_map[status].err;
	return -EIO;
}

/**
 * kite_cmd_out_buf() - the result buffer descriptor a command carries
 * @cmd: command with its opcode set
 *
 * Return: the descriptor inside @cmd, or NULL when the opcode has none.
 */
struct kite_aq_out_buf *kite_cmd_out_buf(struct kite_aq_cmd *cmd)
{
	switch (cmd->hdr.opcode) {
	case KITE_CMD_QUERY_DEVICE:
	case KITE_CMD_QUERY_PORT:
	case KITE_CMD_QUERY_STATS:
		return &cmd->query.out;
	case KITE_CMD_QUERY_QP:
	case KITE_CMD_QUERY_CQ:
	case KITE_CMD_QUERY_QP_STATS:
		return &cmd->query_obj.out;
	default:
		return NULL;
	}
}

static u32 kite_aq_depth(const struct kite_admin *adm)
{
	return 1U << adm->aq_log;
}

/**
 * kite_admin_init() - allocate the admin rings and program their registers
 * @adm: admin queue to set up
 * @dev: DMA device
 * @regs: BAR0 mapping
 * @aq_log: log2 of the submission ring depth
 * @acq_log: log2 of the completion ring depth (>= @aq_log)
 *
 * The device must be reset (not enabled). The caller enables it afterwards.
 *
 * Return: 0 or a negative errno.
 */
int kite_admin_init(struct kite_admin *adm, struct device *dev,
		    void __iomem *regs, u8 aq_log, u8 acq_log)
{
	u32 depth = 1U << aq_log;
	u32 i;

	if (acq_log < aq_log)
		return -EINVAL;

	memset(adm, 0, sizeof(*adm));
	adm->dev = dev;
	adm->regs = regs;
	adm->aq_log = aq_log;
	adm->acq_log = acq_log;
	spin_lock_init(&adm->lock);
	sema_init(&adm->avail, depth);

	adm->ctx = kcalloc(depth, sizeof(*adm->ctx), GFP_KERNEL);
	if (!adm->ctx)
		return -ENOMEM;
	for (i = 0; i < depth; i++)
		init_completion(&adm->ctx[i].done);

	adm->aq = dma_alloc_coherent(dev, depth * sizeof(*adm->aq),
				     &adm->aq_dma, GFP_KERNEL);
	if (!adm->aq)
		goto err_free_ctx;

	adm->acq = dma_alloc_coherent(dev, (1U << acq_log) * sizeof(*adm->acq),
				      &adm->acq_dma, GFP_KERNEL);
	if (!adm->acq)
		goto err_free_aq;

	adm->outbuf = dma_alloc_coherent(dev, depth * KITE_ADMIN_OUTBUF_SIZE,
					 &adm->outbuf_dma, GFP_KERNEL);
	if (!adm->outbuf)
		goto err_free_acq;

	writel(lower_32_bits(adm->aq_dma), regs + KITE_REG_AQ_BASE_LO);
	writel(upper_32_bits(adm->aq_dma), regs + KITE_REG_AQ_BASE_HI);
	writel(aq_log, regs + KITE_REG_AQ_LOG_DEPTH);
	writel(lower_32_bits(adm->acq_dma), regs + KITE_REG_ACQ_BASE_LO);
	writel(upper_32_bits(adm->acq_dma), regs + KITE_REG_ACQ_BASE_HI);
	writel(acq_log, regs + KITE_REG_ACQ_LOG_DEPTH);
	return 0;

err_free_acq:
	dma_free_coherent(dev, (1U << acq_log) * sizeof(*adm->acq), adm->acq,
			  adm->acq_dma);
err_free_aq:
	dma_free_coherent(dev, depth * sizeof(*adm->aq), adm->aq, adm->aq_dma);
err_free_ctx:
	kfree(adm->ctx);
	adm->ctx = NULL;
	return -ENOMEM;
}

/**
 * kite_admin_destroy() - free the admin rings
 * @adm: admin queue
 *
 * The device must be reset and the admin interrupt freed before this.
 */
void kite_admin_destroy(struct kite_admin *adm)
{
	u32 depth = kite_aq_depth(adm);

	if (!adm->ctx)
		return;
	dma_free_coherent(adm->dev, depth * KITE_ADMIN_OUTBUF_SIZE,
			  adm->outbuf, adm->outbuf_dma);
	dma_free_coherent(adm->dev, (1U << adm->acq_log) * sizeof(*adm->acq),
			  adm->acq, adm->acq_dma);
	dma_free_coherent(adm->dev, depth * sizeof(*adm->aq), adm->aq,
			  adm->aq_dma);
	kfree(adm->ctx);
	adm->ctx = NULL;
}

/**
 * kite_acq_take() - consume the next admin completion and find its command
 * @adm: admin queue; the caller holds @adm->lock
 * @ctxp: the outstanding command the completion belongs to (KITE_ACQ_MATCH)
 * @cmd_id: the completion's cmd_id (KITE_ACQ_MATCH, KITE_ACQ_UNKNOWN)
 *
 * Checks the phase bit of the entry at @adm->acq_ci, advances @adm->acq_ci
 * past it and matches its cmd_id against the contexts: the low @adm->aq_log
 * bits select the context, the whole cmd_id must equal the one the context
 * was posted with, and the context must be in use and not yet completed.
 * Touches only memory (no registers), so it can run on a fake ring.
 *
 * Return: the enum kite_acq_result.
 */
enum kite_acq_result kite_acq_take(struct kite_admin *adm,
				   struct kite_admin_ctx **ctxp, u16 *cmd_id)
{
	struct kite_aq_cqe *cqe;
	struct kite_admin_ctx *ctx;
	u16 id;

	cqe = &adm->acq[kite_ring_slot(adm->acq_ci, adm->acq_log)];
	if ((READ_ONCE(cqe->flags) & KITE_ACQE_PHASE) !=
	    kite_ring_phase(adm->acq_ci, adm->acq_log))
		return KITE_ACQ_EMPTY;
	/* Read the rest of the entry only after its phase bit. */
	dma_rmb();
	adm->acq_ci++;

	id = le16_to_cpu(cqe->cmd_id);
	*cmd_id = id;
	ctx = &adm->ctx[kite_ring_slot(id, adm->aq_log)];
	if (!ctx->in_use || ctx->completed || ctx->cmd_id != id)
		return KITE_ACQ_UNKNOWN;
	ctx->cqe = *cqe;
	ctx->completed = true;
	*ctxp = ctx;
	return KITE_ACQ_MATCH;
}

/**
 * kite_admin_process_cq() - consume admin completions
 * @adm: admin queue
 *
 * Called from the admin interrupt (and once more on a timeout to tell a lost
 * interrupt from a hung device). Wakes the waiter of every completion found.
 */
void kite_admin_process_cq(struct kite_admin *adm)
{
	struct kite_admin_ctx *ctx;
	enum kite_acq_result res;
	unsigned long flags;
	u16 cmd_id;

	spin_lock_irqsave(&adm->lock, flags);
	while ((res = kite_acq_take(adm, &ctx, &cmd_id)) != KITE_ACQ_EMPTY) {
		if (res == KITE_ACQ_MATCH)
			complete(&ctx->done);
		else
			dev_warn_ratelimited(adm->dev,
					     "admin completion for unknown cmd_id 0x%x\n",
					     cmd_id);
	}
	spin_unlock_irqrestore(&adm->lock, flags);
}

/* Called with adm->lock held. */
static void kite_admin_kill_locked(struct kite_admin *adm)
{
	u32 i;

	adm->dead = true;
	for (i = 0; i < kite_aq_depth(adm); i++)
		if (adm->ctx[i].in_use && !adm->ctx[i].completed)
			complete(&adm->ctx[i].done);
}

/**
 * kite_admin_mark_dead() - stop using the admin queue
 * @adm: admin queue
 *
 * Every waiting command is woken and fails with -EIO, and so does every
 * later one. The device is reset before the rings are freed.
 */
void kite_admin_mark_dead(struct kite_admin *adm)
{
	unsigned long flags;

	spin_lock_irqsave(&adm->lock, flags);
	kite_admin_kill_locked(adm);
	spin_unlock_irqrestore(&adm->lock, flags);
}

/**
 * kite_admin_is_dead() - whether the admin queue was given up
 * @adm: admin queue
 *
 * Return: true after a timeout or a fatal device error.
 */
bool kite_admin_is_dead(struct kite_admin *adm)
{
	return READ_ONCE(adm->dead);
}
EXPORT_SYMBOL_NS_GPL(kite_admin_is_dead, KITE);

static struct kite_admin_ctx *kite_admin_post(struct kite_admin *adm,
					      struct kite_aq_cmd *cmd,
					      size_t out_len)
{
	struct kite_aq_out_buf *ob = kite_cmd_out_buf(cmd);
	struct kite_admin_ctx *ctx = NULL;
	u32 depth = kite_aq_depth(adm);
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&adm->lock, flags);
	if (adm->dead)
		goto out;
	for (i = 0; i < depth; i++) {
		if (!adm->ctx[i].in_use) {
			ctx = &adm->ctx[i];
			break;
		}
	}
	if (WARN_ON_ONCE(!ctx))
		goto out;

	adm->gen++;
	ctx->cmd_id = (u16)((adm->gen << adm->aq_log) | i);
	ctx->in_use = true;
	ctx->completed = false;
	reinit_completion(&ctx->done);

	cmd->hdr.cmd_id = cpu_to_le16(ctx->cmd_id);
	if (ob && out_len) {
		ob->addr = cpu_to_le64(adm->outbuf_dma +
				       (u64)i * KITE_ADMIN_OUTBUF_SIZE);
		ob->len = cpu_to_le32(out_len);
		memset(adm->outbuf + i * KITE_ADMIN_OUTBUF_SIZE, 0, out_len);
	}
	memcpy(&adm->aq[kite_ring_slot(adm->pi, adm->aq_log)], cmd,
	       sizeof(*cmd));
	adm->pi++;
	/* writel orders the ring write before the doorbell. */
	writel(adm->pi, adm->regs + KITE_REG_AQ_DB);
out:
	spin_unlock_irqrestore(&adm->lock, flags);
	return ctx;
}

/**
 * kite_admin_account() - count one posted command in the admin counters
 * @st: counters; the caller serializes their updates
 * @opcode: the command's opcode
 * @status: its completion status, or KITE_ADMIN_NO_STATUS when none came
 * @latency_ns: time from posting to the end of the wait
 *
 * Only answered commands add to the latency figures: a timeout's latency is
 * the timeout.
 */
void kite_admin_account(struct kite_admin_stats *st, u8 opcode, u16 status,
			u64 latency_ns)
{
	st->posted++;
	if (status == KITE_ADMIN_NO_STATUS) {
		st->timeouts++;
		return;
	}
	if (status == KITE_STS_OK) {
		st->ok++;
	} else {
		st->failed++;
		st->last_fail_opcode = opcode;
		st->last_fail_status = status;
	}
	st->lat_sum_ns += latency_ns;
	st->lat_max_ns = max(st->lat_max_ns, latency_ns);
}

static void kite_admin_release(struct kite_admin *adm,
			       struct kite_admin_ctx *ctx, u8 opcode,
			       u16 status, u64 latency_ns)
{
	unsigned long flags;

	spin_lock_irqsave(&adm->lock, flags);
	kite_admin_account(&adm->stats, opcode, status, latency_ns);
	ctx->in_use = false;
	spin_unlock_irqrestore(&adm->lock, flags);
	up(&adm->avail);
}

/* The wait for @ctx timed out. Give the queue up only if, under the lock
 * the completion path takes, the command is still unanswered: a completion
 * that lands between the timeout and this check wins.
 */
static void kite_admin_timed_out(struct kite_admin *adm,
				 struct kite_admin_ctx *ctx, u8 opcode,
				 unsigned int tmo)
{
	unsigned long flags;
	bool dead = false;
	u32 status;

	spin_lock_irqsave(&adm->lock, flags);
	if (!ctx->completed) {
		kite_admin_kill_locked(adm);
		dead = true;
	}
	spin_unlock_irqrestore(&adm->lock, flags);

	if (!dead) {
		dev_warn(adm->dev,
			 "admin command %s (0x%02x) completed without an interrupt\n",
			 kite_opcode_name(opcode), opcode);
		return;
	}
	status = readl(adm->regs + KITE_REG_DEV_STATUS);
	dev_err(adm->dev,
		"admin command %s (0x%02x) timed out after %u ms (status 0x%x, fatal code %u); device marked dead\n",
		kite_opcode_name(opcode), opcode, tmo, status,
		readl(adm->regs + KITE_REG_FATAL_CODE));
}

/* Log a failed command. Statuses a caller provokes in normal operation
 * (object busy, out of resources, foreign object) are debug messages; the
 * others are errors, rate limited so that a misbehaving device or user
 * cannot flood the log.
 */
static void kite_admin_log_failure(struct kite_admin *adm, u8 opcode,
				   const struct kite_aq_cqe *cqe, int err)
{
	u8 status = cqe->status;
	u32 syndrome = le32_to_cpu(cqe->syndrome);

	switch (status) {
	case KITE_STS_BUSY:
	case KITE_STS_NO_RESOURCES:
	case KITE_STS_PERMISSION:
	case KITE_STS_EXISTS:
		dev_dbg(adm->dev,
			"admin command %s (0x%02x) failed: status %s (0x%02x), syndrome 0x%x (%d)\n",
			kite_opcode_name(opcode), opcode,
			kite_status_name(status), status, syndrome, err);
		break;
	default:
		dev_err_ratelimited(adm->dev,
				    "admin command %s (0x%02x) failed: status %s (0x%02x), syndrome 0x%x (%d)\n",
				    kite_opcode_name(opcode), opcode,
				    kite_status_name(status), status, syndrome,
				    err);
		break;
	}
}

/**
 * kite_admin_exec() - execute one admin command and wait for its completion
 * @adm: admin queue
 * @cmd: command with header opcode/uctx and payload filled; cmd_id and the
 *	 result buffer descriptor are filled here
 * @out: where to copy the result the device writes to the result buffer, or
 *	 NULL
 * @out_len: size of @out, at most KITE_ADMIN_OUTBUF_SIZE
 * @cqe: where to copy the completion (for out[] values), or NULL
 *
 * Sleeps. A command that gets no answer within admin_timeout_ms marks the
 * device dead; from then on every command fails at once with -EIO. Failing
 * commands are logged with their opcode, status and syndrome.
 *
 * Return: 0, the errno of the completion status, -EIO when the device is
 * dead, or -ETIMEDOUT when no command slot became free in time.
 */
int kite_admin_exec(struct kite_admin *adm, struct kite_aq_cmd *cmd,
		    void *out, size_t out_len, struct kite_aq_cqe *cqe)
{
	unsigned int tmo = kite_admin_timeout_ms();
	u8 opcode = cmd->hdr.opcode;
	struct kite_admin_ctx *ctx;
	u64 start, latency;
	int err;

	if (out_len > KITE_ADMIN_OUTBUF_SIZE ||
	    (out && !kite_cmd_out_buf(cmd)))
		return -EINVAL;
	if (kite_admin_is_dead(adm))
		return -EIO;
	if (down_timeout(&adm->avail, msecs_to_jiffies(tmo)))
		return kite_admin_is_dead(adm) ? -EIO : -ETIMEDOUT;

	start = ktime_get_ns();
	ctx = kite_admin_post(adm, cmd, out ? out_len : 0);
	if (!ctx) {
		up(&adm->avail);
		return -EIO;
	}

	if (!wait_for_completion_timeout(&ctx->done, msecs_to_jiffies(tmo))) {
		/* Tell a lost interrupt from a device that stopped. */
		kite_admin_process_cq(adm);
		kite_admin_timed_out(adm, ctx, opcode, tmo);
	}

	latency = ktime_get_ns() - start;

	if (!READ_ONCE(ctx->completed)) {
		trace_kite_admin_cmd(adm->dev, opcode, ctx->cmd_id,
				     KITE_ADMIN_NO_STATUS, -EIO, latency);
		kite_admin_release(adm, ctx, opcode, KITE_ADMIN_NO_STATUS,
				   latency);
		return -EIO;
	}

	err = kite_status_to_errno(ctx->cqe.status);
	trace_kite_admin_cmd(adm->dev, opcode, ctx->cmd_id, ctx->cqe.status,
			     err, latency);
	if (err) {
		kite_admin_log_failure(adm, opcode, &ctx->cqe, err);
	} else {
		if (cqe)
			*cqe = ctx->cqe;
		if (out && out_len)
			memcpy(out, adm->outbuf +
			       (ctx - adm->ctx) * KITE_ADMIN_OUTBUF_SIZE,
			       out_len);
	}
	kite_admin_release(adm, ctx, opcode, ctx->cqe.status, latency);
	return err;
}
