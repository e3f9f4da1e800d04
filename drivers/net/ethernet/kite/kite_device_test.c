// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite kite_device: commands through the real admin queue of a
 * probed Kite device (the KUnit VM runs QEMU with "-device kite"). Every
 * case is skipped when the machine has no Kite PCI function, and fails when
 * it has one that the driver did not probe.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <linux/kthread.h>

#include "kite.h"

#define KITE_TEST_BAD_HANDLE	0x00fffffe
#define KITE_TEST_BAD_OPCODE	0x3e
#define KITE_TEST_THREADS	4
#define KITE_TEST_PASSES	3	/* ring passes of the stress cases */

/* Each case takes the device (locked against unbind) and releases it in
 * the same thread, so cases use KUNIT_EXPECT only while holding it.
 */
static struct kite_dev *kite_test_get(struct kunit *test)
{
	struct kite_dev *kdev = kite_dev_get_any();
	struct pci_dev *pdev;

	if (kdev)
		return kdev;
	pdev = pci_get_device(KITE_PCI_VENDOR_ID, KITE_PCI_DEVICE_ID, NULL);
	if (!pdev)
		kunit_skip(test, "no kite PCI device");
	pci_dev_put(pdev);
	KUNIT_ASSERT_FAILURE(test,
			     "a kite PCI device is present but the driver did not probe it");
	return NULL;
}

/* What probe cached equals @c, field by field (no padding compared). */
static void kite_test_caps_equal(struct kunit *test,
				 const struct kite_caps *c,
				 const struct kite_caps *p)
{
	KUNIT_EXPECT_EQ(test, c->abi_version, p->abi_version);
	KUNIT_EXPECT_EQ(test, c->fw_version, p->fw_version);
	KUNIT_EXPECT_EQ(test, c->sys_image_guid, p->sys_image_guid);
	KUNIT_EXPECT_EQ(test, c->page_size_cap, p->page_size_cap);
	KUNIT_EXPECT_EQ(test, c->max_mr_size, p->max_mr_size);
	KUNIT_EXPECT_EQ(test, c->max_qp, p->max_qp);
	KUNIT_EXPECT_EQ(test, c->max_cq, p->max_cq);
	KUNIT_EXPECT_EQ(test, c->max_mr, p->max_mr);
	KUNIT_EXPECT_EQ(test, c->max_pd, p->max_pd);
	KUNIT_EXPECT_EQ(test, c->max_cqe, p->max_cqe);
	KUNIT_EXPECT_EQ(test, c->max_qp_wr, p->max_qp_wr);
	KUNIT_EXPECT_EQ(test, c->max_sge, p->max_sge);
	KUNIT_EXPECT_EQ(test, c->max_inline, p->max_inline);
	KUNIT_EXPECT_EQ(test, c->max_eq, p->max_eq);
	KUNIT_EXPECT_EQ(test, c->max_uctx, p->max_uctx);
	KUNIT_EXPECT_EQ(test, c->max_gid, p->max_gid);
	KUNIT_EXPECT_EQ(test, c->max_rd_atom, p->max_rd_atom);
	KUNIT_EXPECT_EQ(test, c->cap_flags, p->cap_flags);
	KUNIT_EXPECT_EQ(test, c->num_msix, p->num_msix);
	KUNIT_EXPECT_EQ(test, c->vendor_id, p->vendor_id);
	KUNIT_EXPECT_EQ(test, c->vendor_part_id, p->vendor_part_id);
	KUNIT_EXPECT_EQ(test, c->hw_version, p->hw_version);
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
		KUNIT_EXPECT_EQ(test, KITE_ABI_VER_MAJOR(c.abi_version),
				KITE_ABI_MAJOR);
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
		kite_test_caps_equal(test, &c, &kdev->caps);
	}
	kite_dev_put(kdev);
}

static void kite_test_query_port(struct kunit *test)
{
	struct kite_dev *kdev = kite_test_get(test);
	struct kite_port_info p = {};
	bool link;
	int err;

	err = kite_cmd_query_port(&kdev->admin, KITE_PORT_NUM, &p);
	link = kite_link_up(kdev);
	KUNIT_EXPECT_EQ(test, err, 0);
	if (!err) {
		KUNIT_EXPECT_EQ(test, p.state,
				link ? KITE_PORT_ACTIVE : KITE_PORT_DOWN);
		KUNIT_EXPECT_EQ(test, p.gid_tbl_len, kdev->caps.max_gid);
		KUNIT_EXPECT_TRUE(test, kite_mtu_bytes(p.max_mtu) > 0);
		KUNIT_EXPECT_EQ(test, p.eth_mtu, kdev->netdev->mtu);
		/* The driver reports the active MTU from the netdev MTU. */
		KUNIT_EXPECT_EQ(test, p.active_mtu,
				kite_mtu_from_eth(kdev->netdev->mtu));
		/* The driver reports the header's fixed link rate. */
		KUNIT_EXPECT_EQ(test, p.link_width, KITE_PORT_LINK_WIDTH_1X);
		KUNIT_EXPECT_EQ(test, p.link_speed, KITE_PORT_LINK_SPEED_EDR);
		KUNIT_EXPECT_TRUE(test, ether_addr_equal(p.mac,
							 kdev->netdev->dev_addr));
	}
	/* The port after the last one does not exist. */
	KUNIT_EXPECT_EQ(test, kite_cmd_query_port(&kdev->admin,
						  KITE_PORT_NUM + 1, &p),
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

/* One QUERY_DEVICE whose result must be the device's (cmd_id matched). */
static int kite_test_one_query(struct kite_dev *kdev)
{
	struct kite_caps c = {};
	int err;

	err = kite_cmd_query_device(&kdev->admin, &c);
	if (err)
		return err;
	if (c.abi_version != kdev->caps.abi_version ||
	    c.max_qp != kdev->caps.max_qp ||
	    c.vendor_part_id != kdev->caps.vendor_part_id ||
	    c.page_size_cap != kdev->caps.page_size_cap)
		return -EBADMSG;
	return 0;
}

struct kite_test_thread {
	struct kite_dev *kdev;
	unsigned int count;
	atomic_t *failures;
	atomic_t *first_err;
	struct completion done;
};

static int kite_test_query_thread(void *data)
{
	struct kite_test_thread *t = data;
	unsigned int i;
	int err;

	for (i = 0; i < t->count; i++) {
		err = kite_test_one_query(t->kdev);
		if (err) {
			atomic_inc(t->failures);
			atomic_cmpxchg(t->first_err, 0, err);
		}
	}
	/* @t lives on the test's stack: last access. */
	complete(&t->done);
	return 0;
}

/* KITE_TEST_PASSES passes over the admin rings, first one command at a
 * time, then from several threads at once: the ACQ phase wraps and every
 * completion must reach the command it belongs to.
 */
static void kite_test_admin_stress(struct kunit *test)
{
	struct kite_dev *kdev = kite_test_get(test);
	struct kite_test_thread t[KITE_TEST_THREADS];
	unsigned int n = KITE_TEST_PASSES << kdev->admin.aq_log;
	atomic_t failures = ATOMIC_INIT(0);
	atomic_t first_err = ATOMIC_INIT(0);
	struct task_struct *task;
	u32 ci_before;
	unsigned int i;
	int started = 0;

	ci_before = kdev->admin.acq_ci;
	for (i = 0; i < n; i++) {
		int err = kite_test_one_query(kdev);

		KUNIT_EXPECT_EQ_MSG(test, err, 0, "sequential command %u", i);
		if (err)
			break;
	}
	/* Each command consumed a completion (ib_core may add its own). */
	KUNIT_EXPECT_GE(test, READ_ONCE(kdev->admin.acq_ci) - ci_before, n);

	for (i = 0; i < KITE_TEST_THREADS; i++) {
		t[i].kdev = kdev;
		t[i].count = n;
		t[i].failures = &failures;
		t[i].first_err = &first_err;
		init_completion(&t[i].done);
		task = kthread_run(kite_test_query_thread, &t[i],
				   "kite_test_aq%u", i);
		KUNIT_EXPECT_FALSE(test, IS_ERR(task));
		if (IS_ERR(task))
			break;
		started++;
	}
	/* Each command has its own timeout, so the threads end. */
	for (i = 0; i < started; i++)
		wait_for_completion(&t[i].done);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&failures), 0,
			    "first error %d", atomic_read(&first_err));
	KUNIT_EXPECT_FALSE(test, kite_admin_is_dead(&kdev->admin));
	kite_dev_put(kdev);
}

static struct kunit_case kite_device_cases[] = {
	KUNIT_CASE(kite_test_query_device),
	KUNIT_CASE(kite_test_query_port),
	KUNIT_CASE(kite_test_pd),
	KUNIT_CASE(kite_test_bad_handle),
	KUNIT_CASE(kite_test_unsupported),
	KUNIT_CASE(kite_test_admin_stress),
	{}
};

static struct kunit_suite kite_device_suite = {
	.name = "kite_device",
	.test_cases = kite_device_cases,
};

kunit_test_suite(kite_device_suite);
