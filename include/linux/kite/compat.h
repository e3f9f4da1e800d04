/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kite drivers: the kernel interfaces that differ between the kernel lines
 * kite.ko and kite_ib.ko build against from the same sources (Debian's 6.1
 * and 6.12), keyed on LINUX_VERSION_CODE. Each entry names the release
 * that changed the interface; the drivers use the names defined here and
 * never test the version themselves.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef _LINUX_KITE_COMPAT_H
#define _LINUX_KITE_COMPAT_H

#include <linux/version.h>

/* get_unaligned_be16() and the like: <linux/unaligned.h> since 6.12. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * ib_device_ops.create_cq: since 6.11 its last argument is the uverbs
 * attribute bundle (NULL for a kernel CQ), which holds the driver's udata;
 * before, it was the udata itself (NULL for a kernel CQ).
 * KITE_CREATE_CQ_ARG names the argument's type, kite_create_cq_udata()
 * turns it into the udata or NULL.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define KITE_CREATE_CQ_ARG		struct uverbs_attr_bundle
#define kite_create_cq_udata(arg) ({					\
	struct uverbs_attr_bundle *_attrs = (arg);			\
									\
	_attrs ? &_attrs->driver_udata : NULL;				\
})
#else
#define KITE_CREATE_CQ_ARG		struct ib_udata
#define kite_create_cq_udata(arg)	(arg)
#endif

/*
 * TRACE_EVENT's __assign_str(): since 6.10 it takes only the field and
 * copies the source __string() named; before, it took the source again.
 * kite_trace_assign_str() takes both and passes what the kernel wants.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define kite_trace_assign_str(dst, src)	__assign_str(dst)
#else
#define kite_trace_assign_str(dst, src)	__assign_str(dst, src)
#endif

/*
 * devlink info: since 6.2 the devlink core reports the driver's name
 * itself and devlink_info_driver_name_put() is gone; before, the driver
 * put it. kite_devlink_info_driver_name_put() is 0 or that call's result.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define kite_devlink_info_driver_name_put(req, name)	((void)(req), 0)
#else
#define kite_devlink_info_driver_name_put(req, name)			\
	devlink_info_driver_name_put(req, name)
#endif

/*
 * devlink_fmsg_*_put(): since 6.7 they return nothing (the message keeps
 * its first error); before, each returned an errno. kite_fmsg(call) is
 * that errno, or 0.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#define kite_fmsg(call)		({ call; 0; })
#else
#define kite_fmsg(call)		(call)
#endif

#endif /* _LINUX_KITE_COMPAT_H */
