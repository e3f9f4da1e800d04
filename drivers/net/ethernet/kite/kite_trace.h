/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kite core driver tracepoints (events/kite/ in tracefs): admin commands
 * with their status and latency, the entries of the event queues, and the
 * device's fatal error.
 *
 * Copyright (c) 2026 The Kite authors
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kite

#if !defined(_KITE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KITE_TRACE_H

#include <linux/device.h>
#include <linux/tracepoint.h>
#include <linux/kite/compat.h>

#include "kite.h"

#define kite_show_evt_type(type)					\
	__print_symbolic(type,						\
			 { KITE_EVT_COMPLETION, "COMPLETION" },		\
			 { KITE_EVT_PORT_ACTIVE, "PORT_ACTIVE" },	\
			 { KITE_EVT_PORT_ERR, "PORT_ERR" },		\
			 { KITE_EVT_CQ_ERR, "CQ_ERR" },			\
			 { KITE_EVT_QP_FATAL, "QP_FATAL" },		\
			 { KITE_EVT_QP_REQ_ERR, "QP_REQ_ERR" },		\
			 { KITE_EVT_QP_ACCESS_ERR, "QP_ACCESS_ERR" },	\
			 { KITE_EVT_QP_LAST_WQE, "QP_LAST_WQE" },	\
			 { KITE_EVT_DEV_FATAL, "DEV_FATAL" },		\
			 { KITE_EVT_COMM_EST, "COMM_EST" },		\
			 { KITE_EVT_SRQ_LIMIT, "SRQ_LIMIT" },		\
			 { KITE_EVT_SRQ_ERR, "SRQ_ERR" })

/* One admin command from its doorbell to the end of the wait: @status is
 * the completion's (KITE_ADMIN_NO_STATUS when none came), @err what the
 * caller gets, @latency_ns the time between posting and waking up.
 */
TRACE_EVENT(kite_admin_cmd,
	TP_PROTO(const struct device *dev, u8 opcode, u16 cmd_id, u16 status,
		 int err, u64 latency_ns),
	TP_ARGS(dev, opcode, cmd_id, status, err, latency_ns),
	TP_STRUCT__entry(
		__string(dev, dev_name(dev))
		__string(op, kite_opcode_name(opcode))
		__string(sts, status == KITE_ADMIN_NO_STATUS ? "NONE" :
			      kite_status_name(status))
		__field(u64, latency_ns)
		__field(int, err)
		__field(u16, cmd_id)
		__field(u16, status)
		__field(u8, opcode)
	),
	TP_fast_assign(
		kite_trace_assign_str(dev, dev_name(dev));
		kite_trace_assign_str(op, kite_opcode_name(opcode));
		kite_trace_assign_str(sts, status == KITE_ADMIN_NO_STATUS ?
				      "NONE" : kite_status_name(status));
		__entry->latency_ns = latency_ns;
		__entry->err = err;
		__entry->cmd_id = cmd_id;
		__entry->status = status;
		__entry->opcode = opcode;
	),
	TP_printk("%s %s (0x%02x) cmd_id=0x%04x status=%s (0x%02x) err=%d latency_ns=%llu",
		  __get_str(dev), __get_str(op), __entry->opcode,
		  __entry->cmd_id, __get_str(sts), __entry->status,
		  __entry->err, __entry->latency_ns)
);

/* An entry taken from event queue @eqn (0: the async EQ) at index @ci. */
TRACE_EVENT(kite_eqe,
	TP_PROTO(const struct kite_dev *kdev, u32 eqn, u32 ci,
		 const struct kite_eqe *eqe),
	TP_ARGS(kdev, eqn, ci, eqe),
	TP_STRUCT__entry(
		__string(dev, pci_name(kdev->pdev))
		__field(u32, eqn)
		__field(u32, ci)
		__field(u32, data)
		__field(u8, type)
	),
	TP_fast_assign(
		kite_trace_assign_str(dev, pci_name(kdev->pdev));
		__entry->eqn = eqn;
		__entry->ci = ci;
		__entry->data = le32_to_cpu(eqe->data);
		__entry->type = eqe->type;
	),
	TP_printk("%s eqn=%u ci=%u type=%s data=0x%x", __get_str(dev),
		  __entry->eqn, __entry->ci, kite_show_evt_type(__entry->type),
		  __entry->data)
);

/* The device reported a fatal error with KITE_FATAL_* @code. */
TRACE_EVENT(kite_dev_fatal,
	TP_PROTO(const struct kite_dev *kdev, u32 code),
	TP_ARGS(kdev, code),
	TP_STRUCT__entry(
		__string(dev, pci_name(kdev->pdev))
		__field(u32, code)
	),
	TP_fast_assign(
		kite_trace_assign_str(dev, pci_name(kdev->pdev));
		__entry->code = code;
	),
	TP_printk("%s code=%u", __get_str(dev), __entry->code)
);

#endif /* _KITE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE kite_trace
#include <trace/define_trace.h>
