// SPDX-License-Identifier: GPL-2.0
/*
 * Kite ib_device: its ops, device and port attributes, the GID table (held
 * by the device), registration and port events.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <net/addrconf.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/kite-abi.h>

#include "kite_ib.h"
#include "kite_verbs.h"

/* kite_hw.h gives the port's link in IB encodings. */
static_assert(KITE_PORT_LINK_WIDTH_1X == IB_WIDTH_1X);
static_assert(KITE_PORT_LINK_SPEED_EDR == IB_SPEED_EDR);

static int kite_query_device(struct ib_device *ibdev,
			     struct ib_device_attr *attr,
			     struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibdev);
	const struct kite_caps *caps = &kib->kdev->caps;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = caps->fw_version;
	attr->sys_image_guid = caps->sys_image_guid ?
			       cpu_to_be64(caps->sys_image_guid) :
			       ibdev->node_guid;
	attr->max_mr_size = caps->max_mr_size;
	attr->page_size_cap = caps->page_size_cap;
	attr->vendor_id = caps->vendor_id;
	attr->vendor_part_id = caps->vendor_part_id;
	attr->hw_ver = caps->hw_version;
	attr->max_qp = caps->max_qp;
	attr->max_qp_wr = caps->max_qp_wr;
	attr->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT;
	if (kite_has_mem_mgt(kib)) {
		attr->device_cap_flags |= IB_DEVICE_MEM_MGT_EXTENSIONS;
		attr->max_fast_reg_page_list_len = caps->max_frwr_pages;
	}
	if (kite_has_mw(kib)) {
		attr->device_cap_flags |= IB_DEVICE_MEM_WINDOW |
					  IB_DEVICE_MEM_WINDOW_TYPE_2B;
		attr->max_mw = caps->max_mw;
	}
	if (kite_has_srq(kib)) {
		attr->max_srq = caps->max_srq;
		attr->max_srq_wr = caps->max_srq_wr;
		attr->max_srq_sge = caps->max_srq_sge;
	}
	if (kite_has_mcast(kib)) {
		attr->max_mcast_grp = caps->max_mcast_grp;
		attr->max_mcast_qp_attach = caps->max_mcast_qp;
		/* Every group can hold its most QPs at once. */
		attr->max_total_mcast_qp_attach = caps->max_mcast_grp *
						  caps->max_mcast_qp;
	}
	attr->max_send_sge = caps->max_sge;
	attr->max_recv_sge = caps->max_sge;
	/* Before ABI 1.3 a READ took as many SGEs as any other WQE. */
	attr->max_sge_rd = caps->max_sge_rd ? min(caps->max_sge_rd,
						  caps->max_sge) :
			   caps->max_sge;
	attr->max_cq = caps->max_cq;
	attr->max_cqe = caps->max_cqe;
	attr->max_mr = caps->max_mr;
	attr->max_pd = caps->max_pd;
	attr->max_qp_rd_atom = caps->max_rd_atom;
	attr->max_qp_init_rd_atom = caps->max_rd_atom;
	/* 255 * 2^24 at most (kite_caps_invalid()): more than an int holds. */
	attr->max_res_rd_atom = min_t(u64, (u64)caps->max_rd_atom * caps->max_qp,
				      INT_MAX);
	attr->atomic_cap = (caps->cap_flags & KITE_DEV_CAP_ATOMIC) ?
			   IB_ATOMIC_HCA : IB_ATOMIC_NONE;
	attr->max_pkeys = 1;
	if (caps->cap_flags & KITE_DEV_CAP_UD)
		attr->max_ah = KITE_MAX_AH;
	return 0;
}

/* UD and with it the GSI QP: ib_core's MAD and CM services on the port. */
static bool kite_has_gsi(const struct kite_ib_dev *kib)
{
	return kib->kdev->caps.cap_flags & KITE_DEV_CAP_UD;
}

static enum ib_mtu kite_ib_mtu(u32 kite_mtu)
{
	/* enum kite_mtu numbers MTUs as enum ib_mtu does. */
	return kite_mtu_bytes(kite_mtu) ? (enum ib_mtu)kite_mtu : IB_MTU_1024;
}

static int kite_query_port(struct ib_device *ibdev, u32 port,
			   struct ib_port_attr *attr)
{
	struct kite_ib_dev *kib = to_kib(ibdev);
	struct kite_port_info info;
	struct net_device *nd;
	u32 eth_mtu;
	int err;

	err = kite_cmd_query_port(&kib->kdev->admin, port, &info);
	if (err)
		return err;

	/*
	 * ib_core derives the active MTU from the netdev MTU; so does the
	 * device (QUERY_PORT's active_mtu, checked by the kite_device KUnit
	 * suite). The netdev outlives the ib_device registration.
	 */
	nd = READ_ONCE(kib->kdev->netdev);
	eth_mtu = nd ? READ_ONCE(nd->mtu) : info.eth_mtu;

	if (info.state == KITE_PORT_ACTIVE) {
		attr->state = IB_PORT_ACTIVE;
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	} else {
		attr->state = IB_PORT_DOWN;
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	}
	attr->max_mtu = kite_ib_mtu(info.max_mtu);
	attr->active_mtu = min(attr->max_mtu,
			       kite_ib_mtu(kite_mtu_from_eth(eth_mtu)));
	attr->gid_tbl_len = info.gid_tbl_len;
	/* ib_cm runs over the GSI QP, which needs UD. */
	attr->port_cap_flags = kite_has_gsi(kib) ? IB_PORT_CM_SUP : 0;
	attr->max_msg_sz = KITE_MAX_MSG_SIZE;
	attr->pkey_tbl_len = 1;
	/* One fixed rate: 1X EDR, KITE_PORT_RATE_MBPS (also ethtool's speed). */
	attr->active_width = KITE_PORT_LINK_WIDTH_1X;
	attr->active_speed = KITE_PORT_LINK_SPEED_EDR;
	attr->ip_gids = true;
	return 0;
}

static int kite_get_port_immutable(struct ib_device *ibdev, u32 port,
				   struct ib_port_immutable *immutable)
{
	struct kite_ib_dev *kib = to_kib(ibdev);

	immutable->pkey_tbl_len = 1;
	immutable->gid_tbl_len = kib->kdev->caps.max_gid;
	if (kite_has_gsi(kib)) {
		/*
		 * RoCEv2 with a GSI QP: ib_mad opens QP1 on the port, ib_cm
		 * and rdma_cm connect over it with 256-byte MADs.
		 */
		immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
		immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	} else {
		/*
		 * Without UD there is no GSI QP: ib_mad could not open the
		 * port and ib_cm would have no MAD agent. Without these bits
		 * ib_core skips both, and max_mad_size must then be 0.
		 */
		immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP &
					    ~(RDMA_CORE_CAP_IB_MAD |
					      RDMA_CORE_CAP_IB_CM);
		immutable->max_mad_size = 0;
	}
	return 0;
}

static enum rdma_link_layer kite_get_link_layer(struct ib_device *ibdev,
						u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int kite_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			   u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int kite_gid_cmd(const struct ib_gid_attr *attr, bool add)
{
	struct kite_ib_dev *kib = to_kib(attr->device);
	u8 type;

	if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	type = rdma_gid_attr_network_type(attr) == RDMA_NETWORK_IPV4 ?
	       KITE_GID_ROCE_V2_IPV4 : KITE_GID_ROCE_V2_IPV6;
	if (add)
		return kite_cmd_add_gid(&kib->kdev->admin, attr->gid.raw,
					attr->index, type, attr->port_num);
	return kite_cmd_del_gid(&kib->kdev->admin, attr->gid.raw, attr->index,
				type, attr->port_num);
}

static int kite_add_gid(const struct ib_gid_attr *attr, void **context)
{
	return kite_gid_cmd(attr, true);
}

static int kite_del_gid(const struct ib_gid_attr *attr, void **context)
{
	return kite_gid_cmd(attr, false);
}

static void kite_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	kite_fw_version_str(to_kib(ibdev)->kdev, str, IB_FW_VERSION_NAME_MAX);
}

static const struct ib_device_ops kite_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = KITE_UVERBS_ABI_VERSION,

	.add_gid = kite_add_gid,
	.alloc_hw_port_stats = kite_alloc_hw_port_stats,
	.alloc_mr = kite_alloc_mr,
	.alloc_mw = kite_alloc_mw,
	.alloc_pd = kite_alloc_pd,
	.alloc_ucontext = kite_alloc_ucontext,
	.create_ah = kite_create_ah,
	.create_cq = kite_create_cq,
	.create_qp = kite_create_qp,
	.create_user_ah = kite_create_ah,
	.dealloc_mw = kite_dealloc_mw,
	.dealloc_pd = kite_dealloc_pd,
	.dealloc_ucontext = kite_dealloc_ucontext,
	.del_gid = kite_del_gid,
	.dereg_mr = kite_dereg_mr,
	.destroy_ah = kite_destroy_ah,
	.destroy_cq = kite_destroy_cq,
	.destroy_qp = kite_destroy_qp,
	.disassociate_ucontext = kite_disassociate_ucontext,
	.fill_res_cq_entry = kite_fill_res_cq_entry,
	.fill_res_mr_entry = kite_fill_res_mr_entry,
	.fill_res_qp_entry = kite_fill_res_qp_entry,
	.fill_res_qp_entry_raw = kite_fill_res_qp_entry_raw,
	.get_dev_fw_str = kite_get_dev_fw_str,
	.get_dma_mr = kite_get_dma_mr,
	.get_hw_stats = kite_get_hw_stats,
	.get_link_layer = kite_get_link_layer,
	.get_port_immutable = kite_get_port_immutable,
	.map_mr_sg = kite_map_mr_sg,
	.mmap = kite_mmap,
	.mmap_free = kite_mmap_free,
	.modify_qp = kite_modify_qp,
	.poll_cq = kite_poll_cq,
	.post_recv = kite_post_recv,
	.post_send = kite_post_send,
	.query_ah = kite_query_ah,
	.query_device = kite_query_device,
	.query_pkey = kite_query_pkey,
	.query_port = kite_query_port,
	.query_qp = kite_query_qp,
	.reg_user_mr = kite_reg_user_mr,
	.req_notify_cq = kite_req_notify_cq,
	.rereg_user_mr = kite_rereg_user_mr,
	.resize_cq = kite_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, kite_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, kite_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, kite_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, kite_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, kite_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, kite_ucontext, ibuc),
};

/* Offered only when the device has SRQs: ib_core refuses them otherwise. */
static const struct ib_device_ops kite_srq_ops = {
	.create_srq = kite_create_srq,
	.destroy_srq = kite_destroy_srq,
	.modify_srq = kite_modify_srq,
	.post_srq_recv = kite_post_srq_recv,
	.query_srq = kite_query_srq,

	INIT_RDMA_OBJ_SIZE(ib_srq, kite_srq, ibsrq),
};

/* Offered only when the device has multicast groups. */
static const struct ib_device_ops kite_mcast_ops = {
	.attach_mcast = kite_attach_mcast,
	.detach_mcast = kite_detach_mcast,
};

/* Under kib->port_lock, with the ib_device registered. */
static void kite_ib_dispatch_port(struct kite_ib_dev *kib,
				  enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &kib->ibdev,
		.event = type,
		.element.port_num = KITE_PORT_NUM,
	};

	lockdep_assert_held(&kib->port_lock);
	ib_dispatch_event(&ev);
}

/**
 * kite_ib_port_event() - dispatch a port or device event to ib_core
 * @kib: RDMA device
 * @type: IB_EVENT_PORT_ACTIVE, IB_EVENT_PORT_ERR or IB_EVENT_DEVICE_FATAL
 *
 * Dropped while the ib_device is not registered: kite_ib_register()
 * reports the link state once it is. ib_dispatch_event() only queues
 * work, so this is safe in interrupts.
 */
void kite_ib_port_event(struct kite_ib_dev *kib, enum ib_event_type type)
{
	unsigned long flags;

	spin_lock_irqsave(&kib->port_lock, flags);
	if (kib->port_events)
		kite_ib_dispatch_port(kib, type);
	spin_unlock_irqrestore(&kib->port_lock, flags);
}

/**
 * kite_ib_register() - bind the ib_device to the netdev and register it
 * @kib: RDMA device of a core device with a registered netdev, registered
 *	 as the core's event client
 *
 * Return: 0 or a negative errno.
 */
int kite_ib_register(struct kite_ib_dev *kib)
{
	struct kite_dev *kdev = kib->kdev;
	struct ib_device *ibdev = &kib->ibdev;
	unsigned long flags;
	int err;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = KITE_PORT_NUM;	/* ports 1..KITE_PORT_NUM */
	ibdev->num_comp_vectors = kdev->num_comp_eqs;
	/*
	 * The PCI function is the parent, as for other RDMA drivers over an
	 * auxiliary device: sysfs and rdma-core find the device (and the
	 * provider its PCI IDs) there.
	 */
	ibdev->dev.parent = &kdev->pdev->dev;
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, kdev->netdev->dev_addr);
	strscpy(ibdev->node_desc, "Kite RoCEv2 NIC", sizeof(ibdev->node_desc));
	ib_set_device_ops(ibdev, &kite_dev_ops);
	if (kite_has_srq(kib))
		ib_set_device_ops(ibdev, &kite_srq_ops);
	if (kite_has_mcast(kib))
		ib_set_device_ops(ibdev, &kite_mcast_ops);
	if (kite_has_qp_stats(kib))
		ib_set_device_ops(ibdev, &kite_counter_ops);

	err = ib_device_set_netdev(ibdev, kdev->netdev, KITE_PORT_NUM);
	if (err) {
		dev_err(&kdev->pdev->dev, "ib_device_set_netdev failed: %d\n",
			err);
		return err;
	}
	err = ib_register_device(ibdev, "kite_%d", &kdev->pdev->dev);
	if (err) {
		dev_err(&kdev->pdev->dev, "ib_register_device failed: %d\n",
			err);
		/*
		 * Some failure paths of ib_register_device() keep the netdev
		 * reference until ib_dealloc_device(); drop it now so that the
		 * netdev can be unregistered first.
		 */
		ib_device_set_netdev(ibdev, NULL, KITE_PORT_NUM);
		return err;
	}

	if (!kite_has_gsi(kib))
		ibdev_info(ibdev,
			   "device without UD: no GSI QP, MAD and CM services are off on port %u\n",
			   KITE_PORT_NUM);

	/*
	 * Link events that came before were not dispatched: report the state
	 * the link has now. A later event is dispatched after this, under
	 * the same lock.
	 */
	spin_lock_irqsave(&kib->port_lock, flags);
	kib->port_events = true;
	kite_ib_dispatch_port(kib, kite_link_up(kdev) ? IB_EVENT_PORT_ACTIVE :
							IB_EVENT_PORT_ERR);
	spin_unlock_irqrestore(&kib->port_lock, flags);
	return 0;
}

/**
 * kite_ib_unregister() - stop port events and unregister the ib_device
 * @kib: RDMA device
 */
void kite_ib_unregister(struct kite_ib_dev *kib)
{
	unsigned long flags;

	spin_lock_irqsave(&kib->port_lock, flags);
	kib->port_events = false;
	spin_unlock_irqrestore(&kib->port_lock, flags);
	ib_unregister_device(&kib->ibdev);
}
