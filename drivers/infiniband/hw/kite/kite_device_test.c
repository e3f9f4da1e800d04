// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite kite_device: commands through the real admin queue of a
 * probed Kite device (the KUnit VM runs QEMU with "-device kite"). Every
 * case is skipped when no device is bound to the driver.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <kunit/test.h>
#include <linux/etherdevice.h>

#include "kite.h"

#define KITE_TEST_BAD_HANDLE	0x00fffffe
#define KITE_TEST_BAD_OPCODE	0x3e

/*
 * Each case takes the device (locked against unbind) and releases it in
 * the same thread, so cases use KUNIT_EXPECT only while holding it.
 */
static struct kite_dev *kite_test_get(struct kunit *test)
{
	struct kite_dev *kdev = kite_dev_get_any();

	if (!kdev)
		kunit_skip(test, "no kite device probed");
	return kdev;
}

static void kite_test_query_device(struct kunit *test)
{
	struct kite_dev *kdev = kite_test_get(test);
	struct kite_caps c;
	u64 pages;
	int err;

	memset(&c, 0, sizeof(c));
	err = kite_cmd_query_device(&kdev->admin, &c);
	KUNIT_EXPECT_EQ(test, err, 0);
	if (!err) {
		pages = kite_rd32(kdev, KITE_REG_CAP_PAGE_SIZES) |
			(u64)kite_rd32(kdev, KITE_REG_CAP_PAGE_SIZES_HI) << 32;
		KUNIT_EXPECT_EQ(test, c.abi_version >> 16, KITE_ABI_MAJOR);
		KUNIT_EXPECT_EQ(test, c.abi_version,
				kite_rd32(kdev, KITE_REG_VERSION));
		KUNIT_EXPECT_EQ(test, c.vendor_id, KITE_PCI_VENDOR_ID);
		KUNIT_EXPECT_EQ(test, c.vendor_part_id, KITE_PCI_DEVICE_ID);
		KUNIT_EXPECT_EQ(test, c.max_qp,
				kite_rd32(kdev, KITE_REG_CAP_MAX_QP));
		KUNIT_EXPECT_EQ(test, c.max_pd,
				kite_rd32(kdev, KITE_REG_CAP_MAX_PD));
		KUNIT_EXPECT_EQ(test, c.max_gid,
				kite_rd32(kdev, KITE_REG_CAP_MAX_GID));
		KUNIT_EXPECT_EQ(test, c.max_uctx,
				kite_rd32(kdev, KITE_REG_CAP_MAX_UCTX));
		KUNIT_EXPECT_EQ(test, c.max_eq,
				kite_rd32(kdev, KITE_REG_CAP_MAX_EQ));
		KUNIT_EXPECT_EQ(test, c.num_msix,
				kite_rd32(kdev, KITE_REG_CAP_NUM_MSIX));
		KUNIT_EXPECT_EQ(test, c.page_size_cap, pages);
		KUNIT_EXPECT_GT(test, c.max_pd, 0);
		/* What probe cached is what the device says now. */
		KUNIT_EXPECT_EQ(test, memcmp(&c, &kdev->caps, sizeof(c)), 0);
	}
	kite_dev_put(kdev);
}

static void kite_test_query_port(struct kunit *test)
{
	struct kite_dev *kdev = kite_test_get(test);
	struct kite_port_info p = {};
	bool link;
	int err;

	err = kite_cmd_query_port(&kdev->admin, KITE_IB_PORT, &p);
	link = kite_link_up(kdev);
	KUNIT_EXPECT_EQ(test, err, 0);
	if (!err) {
		KUNIT_EXPECT_EQ(test, p.state,
				link ? KITE_PORT_ACTIVE : KITE_PORT_DOWN);
		KUNIT_EXPECT_EQ(test, p.gid_tbl_len, kdev->caps.max_gid);
		KUNIT_EXPECT_TRUE(test, kite_mtu_bytes(p.max_mtu) > 0);
		KUNIT_EXPECT_EQ(test, p.eth_mtu, kdev->netdev->mtu);
		KUNIT_EXPECT_TRUE(test, ether_addr_equal(p.mac,
							 kdev->netdev->dev_addr));
	}
	/* Port 2 does not exist. */
	KUNIT_EXPECT_EQ(test, kite_cmd_query_port(&kdev->admin, 2, &p),
			-EINVAL);
	kite_dev_put(kdev);
}

static void kite_test_pd(struct kunit *test)
{
	struct kite_dev *kdev = kite_test_get(test);
	struct kite_hw_stats before = {}, during = {}, after = {};
	u32 pdn = 0;
	int err;

	KUNIT_EXPECT_EQ(test, kite_cmd_query_stats(&kdev->admin, &before), 0);
	err = kite_cmd_alloc_pd(&kdev->admin, 0, &pdn);
	KUNIT_EXPECT_EQ(test, err, 0);
	if (!err) {
		KUNIT_EXPECT_EQ(test, kite_cmd_query_stats(&kdev->admin,
							   &during), 0);
		KUNIT_EXPECT_EQ(test, during.num_pd, before.num_pd + 1);
		KUNIT_EXPECT_EQ(test, kite_cmd_dealloc_pd(&kdev->admin, 0, pdn),
				0);
		/* Freed once: the handle is gone. */
		KUNIT_EXPECT_EQ(test, kite_cmd_dealloc_pd(&kdev->admin, 0, pdn),
				-ENOENT);
		KUNIT_EXPECT_EQ(test, kite_cmd_query_stats(&kdev->admin,
							   &after), 0);
		KUNIT_EXPECT_EQ(test, after.num_pd, before.num_pd);
	}
	kite_dev_put(kdev);
}

static void kite_test_bad_handle(struct kunit *test)
{
	struct kite_dev *kdev = kite_test_get(test);

	KUNIT_EXPECT_EQ(test, kite_cmd_dealloc_pd(&kdev->admin, 0,
						  KITE_TEST_BAD_HANDLE),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, kite_cmd_destroy_eq(&kdev->admin,
						  KITE_TEST_BAD_HANDLE),
			-ENOENT);
	kite_dev_put(kdev);
}

static void kite_test_unsupported(struct kunit *test)
{
	struct kite_dev *kdev = kite_test_get(test);
	struct kite_aq_cmd cmd;
	struct kite_caps c;

	kite_enc_hdr(&cmd, KITE_TEST_BAD_OPCODE, 0);
	KUNIT_EXPECT_EQ(test, kite_admin_exec(&kdev->admin, &cmd, NULL, 0,
					      NULL), -EOPNOTSUPP);
	/* The queue keeps working after failed commands. */
	KUNIT_EXPECT_FALSE(test, kite_admin_is_dead(&kdev->admin));
	KUNIT_EXPECT_EQ(test, kite_cmd_query_device(&kdev->admin, &c), 0);
	kite_dev_put(kdev);
}

static struct kunit_case kite_device_cases[] = {
	KUNIT_CASE(kite_test_query_device),
	KUNIT_CASE(kite_test_query_port),
	KUNIT_CASE(kite_test_pd),
	KUNIT_CASE(kite_test_bad_handle),
	KUNIT_CASE(kite_test_unsupported),
	{}
};

static struct kunit_suite kite_device_suite = {
	.name = "kite_device",
	.test_cases = kite_device_cases,
};

kunit_test_suite(kite_device_suite);
