/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kite RDMA driver tracepoints (events/kite_ib/ in tracefs): QP creation,
 * state changes and destruction, and the QP and CQ events of the device.
 *
 * Copyright (c) 2026 The Kite authors
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kite_ib

#if !defined(_KITE_IB_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KITE_IB_TRACE_H

#include <linux/tracepoint.h>
#include <linux/kite/compat.h>
#include <rdma/ib_verbs.h>

#include "kite_ib.h"

#define kite_show_qp_state(state)					\
	__print_symbolic(state,						\
			 { IB_QPS_RESET, "RESET" },			\
			 { IB_QPS_INIT, "INIT" },			\
			 { IB_QPS_RTR, "RTR" },				\
			 { IB_QPS_RTS, "RTS" },				\
			 { IB_QPS_SQD, "SQD" },				\
			 { IB_QPS_SQE, "SQE" },				\
			 { IB_QPS_ERR, "ERR" })

#define kite_show_qp_type(type)						\
	__print_symbolic(type,						\
			 { IB_QPT_GSI, "GSI" },				\
			 { IB_QPT_RC, "RC" },				\
			 { IB_QPT_UC, "UC" },				\
			 { IB_QPT_UD, "UD" })

/* CREATE_QP's outcome; @qpn is 0 when it failed (@err). */
TRACE_EVENT(kite_ib_qp_create,
	TP_PROTO(const struct kite_ib_dev *kib, u32 qpn, int type, u32 uctx,
		 u32 sq_depth, u32 rq_depth, int err),
	TP_ARGS(kib, qpn, type, uctx, sq_depth, rq_depth, err),
	TP_STRUCT__entry(
		__string(dev, kib->ibdev.name)
		__field(u32, qpn)
		__field(int, type)
		__field(u32, uctx)
		__field(u32, sq_depth)
		__field(u32, rq_depth)
		__field(int, err)
	),
	TP_fast_assign(
		kite_trace_assign_str(dev, kib->ibdev.name);
		__entry->qpn = qpn;
		__entry->type = type;
		__entry->uctx = uctx;
		__entry->sq_depth = sq_depth;
		__entry->rq_depth = rq_depth;
		__entry->err = err;
	),
	TP_printk("%s qpn=%u type=%s uctx=%u sq_depth=%u rq_depth=%u err=%d",
		  __get_str(dev), __entry->qpn, kite_show_qp_type(__entry->type),
		  __entry->uctx, __entry->sq_depth, __entry->rq_depth,
		  __entry->err)
);

/* A modify_qp from state @cur to @next (equal when @mask has no state). */
TRACE_EVENT(kite_ib_qp_modify,
	TP_PROTO(const struct kite_ib_dev *kib, u32 qpn, int cur, int next,
		 int mask, int err),
	TP_ARGS(kib, qpn, cur, next, mask, err),
	TP_STRUCT__entry(
		__string(dev, kib->ibdev.name)
		__field(u32, qpn)
		__field(int, cur)
		__field(int, next)
		__field(int, mask)
		__field(int, err)
	),
	TP_fast_assign(
		kite_trace_assign_str(dev, kib->ibdev.name);
		__entry->qpn = qpn;
		__entry->cur = cur;
		__entry->next = next;
		__entry->mask = mask;
		__entry->err = err;
	),
	TP_printk("%s qpn=%u %s->%s mask=0x%x err=%d", __get_str(dev),
		  __entry->qpn, kite_show_qp_state(__entry->cur),
		  kite_show_qp_state(__entry->next), __entry->mask,
		  __entry->err)
);

TRACE_EVENT(kite_ib_qp_destroy,
	TP_PROTO(const struct kite_ib_dev *kib, u32 qpn, int err),
	TP_ARGS(kib, qpn, err),
	TP_STRUCT__entry(
		__string(dev, kib->ibdev.name)
		__field(u32, qpn)
		__field(int, err)
	),
	TP_fast_assign(
		kite_trace_assign_str(dev, kib->ibdev.name);
		__entry->qpn = qpn;
		__entry->err = err;
	),
	TP_printk("%s qpn=%u err=%d", __get_str(dev), __entry->qpn,
		  __entry->err)
);

/*
 * An async event for QP or CQ @num, as the ib_event it becomes; @known is
 * false when no such object exists (the event is dropped).
 */
DECLARE_EVENT_CLASS(kite_ib_obj_event,
	TP_PROTO(const struct kite_ib_dev *kib, u32 num,
		 enum ib_event_type event, bool known),
	TP_ARGS(kib, num, event, known),
	TP_STRUCT__entry(
		__string(dev, kib->ibdev.name)
		__string(ev, ib_event_msg(event))
		__field(u32, num)
		__field(bool, known)
	),
	TP_fast_assign(
		kite_trace_assign_str(dev, kib->ibdev.name);
		kite_trace_assign_str(ev, ib_event_msg(event));
		__entry->num = num;
		__entry->known = known;
	),
	TP_printk("%s num=%u event=\"%s\" known=%u", __get_str(dev),
		  __entry->num, __get_str(ev), __entry->known)
);

DEFINE_EVENT(kite_ib_obj_event, kite_ib_qp_event,
	TP_PROTO(const struct kite_ib_dev *kib, u32 num,
		 enum ib_event_type event, bool known),
	TP_ARGS(kib, num, event, known)
);

DEFINE_EVENT(kite_ib_obj_event, kite_ib_cq_event,
	TP_PROTO(const struct kite_ib_dev *kib, u32 num,
		 enum ib_event_type event, bool known),
	TP_ARGS(kib, num, event, known)
);

#endif /* _KITE_IB_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE kite_ib_trace
#include <trace/define_trace.h>
