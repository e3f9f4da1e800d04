// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit case of the suite kite_datapath for UD multicast: the limits the
 * driver reports, attach and detach through ib_core with the group's
 * Ethernet address on the netdev's list while attached, and the device's
 * errors (a second attach, a detach of a QP that is not attached).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>

#include "kite_datapath_test.h"

#define KITE_DT_MCAST_QKEY	0x11223344

/* Whether @mac is on the multicast list of @nd. */
static bool kite_dt_mc_listed(struct net_device *nd, const u8 *mac)
{
	struct netdev_hw_addr *ha;
	bool found = false;

	netif_addr_lock_bh(nd);
	netdev_for_each_mc_addr(ha, nd)
		if (ether_addr_equal(ha->addr, mac))
			found = true;
	netif_addr_unlock_bh(nd);
	return found;
}

void kite_test_dp_mcast_attach(struct kunit *test)
{
	static const u8 group6[16] = {
		0xff, 0x0e, [12] = 0x4b, 0x54, 0x00, 0x01
	};
	static const u8 group4[16] = {
		[10] = 0xff, 0xff, 239, 0xcb, 0x54, 0x02
	};
	struct kite_dt *dt = test->priv;
	const struct kite_caps *caps;
	const struct ib_device_attr *a;
	struct net_device *nd;
	union ib_gid g6, g4;
	u8 mac6[ETH_ALEN], mac4[ETH_ALEN];

	/* dt->kib is set by the common setup. */
	kite_dt_setup_common(test);
	caps = &dt->kib->kdev->caps;
	a = &dt->kib->ibdev.attrs;
	nd = dt->kib->kdev->netdev;
	KUNIT_ASSERT_TRUE(test, caps->cap_flags & KITE_DEV_CAP_MCAST);
	KUNIT_EXPECT_EQ(test, a->max_mcast_grp, caps->max_mcast_grp);
	KUNIT_EXPECT_EQ(test, a->max_mcast_qp_attach, caps->max_mcast_qp);
	KUNIT_EXPECT_EQ(test, a->max_total_mcast_qp_attach,
			caps->max_mcast_grp * caps->max_mcast_qp);
	KUNIT_EXPECT_GT(test, a->max_mcast_grp, 0);

	dt->a = kite_dt_create_ud(test, dt, KITE_DT_MCAST_QKEY);
	memcpy(g6.raw, group6, sizeof(g6.raw));
	memcpy(g4.raw, group4, sizeof(g4.raw));
	kite_gid_mcast_mac(g6.raw, mac6);
	kite_gid_mcast_mac(g4.raw, mac4);
	/* 33:33 and the last 32 bits; 01:00:5e and the low 23 bits. */
	KUNIT_EXPECT_EQ(test, mac6[0], 0x33);
	KUNIT_EXPECT_EQ(test, mac6[2], 0x4b);
	KUNIT_EXPECT_EQ(test, mac4[0], 0x01);
	KUNIT_EXPECT_EQ(test, mac4[3], 0xcb & 0x7f);

	KUNIT_ASSERT_EQ(test, ib_attach_mcast(dt->a, &g6, 0), 0);
	KUNIT_EXPECT_TRUE(test, kite_dt_mc_listed(nd, mac6));
	KUNIT_EXPECT_EQ(test, ib_attach_mcast(dt->a, &g6, 0), -EEXIST);
	KUNIT_EXPECT_EQ(test, ib_attach_mcast(dt->a, &g4, 0), 0);
	KUNIT_EXPECT_TRUE(test, kite_dt_mc_listed(nd, mac4));
	/* ib_core keeps an attached QP alive. */
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(dt->a), -EBUSY);

	KUNIT_EXPECT_EQ(test, ib_detach_mcast(dt->a, &g6, 0), 0);
	KUNIT_EXPECT_FALSE(test, kite_dt_mc_listed(nd, mac6));
	KUNIT_EXPECT_TRUE(test, kite_dt_mc_listed(nd, mac4));
	KUNIT_EXPECT_EQ(test, ib_detach_mcast(dt->a, &g6, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, ib_detach_mcast(dt->a, &g4, 0), 0);
	KUNIT_EXPECT_FALSE(test, kite_dt_mc_listed(nd, mac4));
}
