// SPDX-License-Identifier: GPL-2.0
/*
 * Kite RoCEv2 NIC core driver: PCI probe/remove/shutdown, device reset and
 * enable, BARs, MSI-X and the admin interrupt. It brings up the admin
 * queue, the EQs and the net_device, then adds the RDMA auxiliary device.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/ethtool.h>
#include <linux/iopoll.h>
#include <linux/module.h>

#include "kite.h"

MODULE_AUTHOR("The Kite authors");
MODULE_DESCRIPTION("Kite RoCEv2 NIC core and Ethernet driver");
MODULE_LICENSE("GPL");

static const struct pci_device_id kite_pci_tbl[] = {
	{ PCI_DEVICE(KITE_PCI_VENDOR_ID, KITE_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, kite_pci_tbl);

static irqreturn_t kite_admin_irq(int irq, void *data)
{
	struct kite_dev *kdev = data;

	kite_admin_process_cq(&kdev->admin);
	kite_aeq_process(kdev);
	return IRQ_HANDLED;
}

/**
 * kite_reset() - reset the device and wait until it has done so
 * @kdev: device
 *
 * Drops every object, ring and EQ on the device; afterwards it no longer
 * touches host memory.
 *
 * Return: 0 or -ETIMEDOUT.
 */
static int kite_reset(struct kite_dev *kdev)
{
	u32 ctrl;
	int err;

	kite_wr32(kdev, KITE_REG_DEV_CTRL, KITE_CTRL_RESET);
	err = readl_poll_timeout(kdev->regs + KITE_REG_DEV_CTRL, ctrl,
				 !(ctrl & (KITE_CTRL_RESET | KITE_CTRL_ENABLE)),
				 1000, KITE_RESET_TIMEOUT_MS * USEC_PER_MSEC);
	if (err)
		dev_err(&kdev->pdev->dev, "device reset timed out (ctrl 0x%x)\n",
			ctrl);
	return err;
}

static int kite_enable(struct kite_dev *kdev)
{
	u32 status;
	int err;

	kite_wr32(kdev, KITE_REG_DEV_CTRL, KITE_CTRL_ENABLE);
	err = readl_poll_timeout(kdev->regs + KITE_REG_DEV_STATUS, status,
				 status & (KITE_STATUS_READY | KITE_STATUS_FATAL),
				 1000, KITE_ENABLE_TIMEOUT_MS * USEC_PER_MSEC);
	if (err) {
		dev_err(&kdev->pdev->dev,
			"device did not become ready within %u ms (status 0x%x)\n",
			KITE_ENABLE_TIMEOUT_MS, status);
		return err;
	}
	if (status & KITE_STATUS_FATAL) {
		dev_err(&kdev->pdev->dev,
			"device failed to enable: fatal code %u\n",
			kite_rd32(kdev, KITE_REG_FATAL_CODE));
		return -EIO;
	}
	return 0;
}

static int kite_check_hw(struct kite_dev *kdev)
{
	struct pci_dev *pdev = kdev->pdev;
	u32 version = kite_rd32(kdev, KITE_REG_VERSION);

	if (version == U32_MAX || KITE_ABI_VER_MAJOR(version) != KITE_ABI_MAJOR) {
		dev_err(&pdev->dev, "unsupported device ABI version 0x%x\n",
			version);
		return -ENODEV;
	}

	kdev->max_aq_log = kite_rd32(kdev, KITE_REG_CAP_MAX_AQ_LOG_DEPTH);
	kdev->max_eq_log = kite_rd32(kdev, KITE_REG_CAP_MAX_EQ_LOG_DEPTH);
	kdev->max_eth_log = kite_rd32(kdev, KITE_REG_CAP_MAX_ETH_LOG_DEPTH);
	if (kdev->max_aq_log < KITE_MIN_LOG_DEPTH ||
	    kdev->max_eq_log < KITE_MIN_LOG_DEPTH ||
	    kdev->max_eth_log < KITE_MIN_LOG_DEPTH) {
		dev_err(&pdev->dev, "invalid ring depth capabilities\n");
		return -ENODEV;
	}
	return 0;
}

static int kite_setup_msix(struct kite_dev *kdev)
{
	u32 cap = kite_rd32(kdev, KITE_REG_CAP_NUM_MSIX);
	int want, n;

	want = min_t(u32, cap, KITE_MSIX_NUM);
	want = min_t(int, want, KITE_MSIX_COMP_BASE + num_online_cpus());
	n = pci_alloc_irq_vectors(kdev->pdev, KITE_MSIX_COMP_BASE + 1, want,
				  PCI_IRQ_MSIX);
	if (n < 0) {
		dev_err(&kdev->pdev->dev,
			"cannot allocate %d MSI-X vectors (device has %u): %d\n",
			KITE_MSIX_COMP_BASE + 1, cap, n);
		return n;
	}
	kdev->num_vectors = n;
	return 0;
}

static int kite_map_bars(struct kite_dev *kdev)
{
	struct pci_dev *pdev = kdev->pdev;

	if (pci_resource_len(pdev, KITE_BAR_REGS) < KITE_REGS_SIZE ||
	    pci_resource_len(pdev, KITE_BAR_DB) < KITE_DB_BAR_SIZE) {
		dev_err(&pdev->dev, "BARs too small\n");
		return -ENODEV;
	}
	kdev->regs = pci_iomap(pdev, KITE_BAR_REGS, KITE_REGS_SIZE);
	if (!kdev->regs)
		return -ENOMEM;
	kdev->db = pci_iomap(pdev, KITE_BAR_DB, KITE_DB_PAGE_SIZE);
	if (!kdev->db) {
		pci_iounmap(pdev, kdev->regs);
		return -ENOMEM;
	}
	return 0;
}

static void kite_unmap_bars(struct kite_dev *kdev)
{
	pci_iounmap(kdev->pdev, kdev->db);
	pci_iounmap(kdev->pdev, kdev->regs);
}

/* Stop the device and free what it may access; the reverse of probe's
 * hardware part. A device that does not confirm the reset may still write
 * to its rings: it loses bus mastering and the rings are leaked rather
 * than handed back to the allocator. A function that is no longer on the
 * bus (surprise removal) cannot write to memory: its rings are freed.
 */
static int kite_hw_teardown(struct kite_dev *kdev)
{
	int err;

	WRITE_ONCE(kdev->aeq_ready, false);
	err = kite_reset(kdev);
	free_irq(pci_irq_vector(kdev->pdev, KITE_MSIX_ADMIN), kdev);
	if (err && pci_device_is_present(kdev->pdev)) {
		pci_clear_master(kdev->pdev);
		dev_err(&kdev->pdev->dev,
			"device did not reset: bus mastering disabled, its DMA rings are leaked\n");
		return err;
	}
	kite_comp_eqs_free(kdev);
	kite_eq_free_ring(kdev, &kdev->aeq);
	kite_admin_destroy(&kdev->admin);
	return 0;
}

/**
 * kite_fw_version_str() - the firmware version as text
 * @kdev: device
 * @buf: where to write it
 * @len: size of @buf
 *
 * The device reports the firmware version as major << 16 | minor, like
 * its ABI version; every interface (ib_core, ethtool, the log) prints it
 * as "major.minor".
 */
void kite_fw_version_str(const struct kite_dev *kdev, char *buf, size_t len)
{
	u32 fw = kdev->caps.fw_version;

	snprintf(buf, len, "%u.%u", KITE_ABI_VER_MAJOR(fw),
		 KITE_ABI_VER_MINOR(fw));
}
EXPORT_SYMBOL_NS_GPL(kite_fw_version_str, KITE);

/**
 * kite_dev_start() - bring a reset function up as probe does
 * @kdev: device with its BARs mapped and its MSI-X vectors allocated
 *
 * Resets the device, sets up the admin queue, the async EQ and the admin
 * interrupt, enables the device, reads its capabilities, creates the
 * completion EQs, the net_device and the RDMA auxiliary device. Probe
 * calls it once, recovery after every kite_dev_stop().
 *
 * Return: 0, or a negative errno with everything undone.
 */
int kite_dev_start(struct kite_dev *kdev)
{
	struct pci_dev *pdev = kdev->pdev;
	const char *bad;
	u8 aq_log;
	int err;

	err = kite_reset(kdev);
	if (err)
		return err;
	aq_log = min_t(u8, KITE_AQ_LOG_DEPTH, kdev->max_aq_log);
	err = kite_admin_init(&kdev->admin, &pdev->dev, kdev->regs, aq_log,
			      aq_log);
	if (err)
		return err;
	err = kite_aeq_setup(kdev);
	if (err)
		goto err_admin_destroy;
	snprintf(kdev->aeq.name, sizeof(kdev->aeq.name), "kite-admin@pci:%s",
		 pci_name(pdev));
	err = request_irq(pci_irq_vector(pdev, KITE_MSIX_ADMIN), kite_admin_irq,
			  0, kdev->aeq.name, kdev);
	if (err)
		goto err_free_aeq;

	err = kite_enable(kdev);
	if (err)
		goto err_hw_teardown;
	WRITE_ONCE(kdev->aeq_ready, true);
	kite_eq_arm(kdev, &kdev->aeq);

	err = kite_cmd_query_device(&kdev->admin, &kdev->caps);
	if (err) {
		dev_err(&pdev->dev, "QUERY_DEVICE failed: %d\n", err);
		goto err_hw_teardown;
	}
	if (KITE_ABI_VER_MAJOR(kdev->caps.abi_version) != KITE_ABI_MAJOR) {
		dev_err(&pdev->dev, "QUERY_DEVICE: unsupported ABI 0x%x\n",
			kdev->caps.abi_version);
		err = -ENODEV;
		goto err_hw_teardown;
	}
	bad = kite_caps_invalid(&kdev->caps);
	if (bad) {
		dev_err(&pdev->dev, "QUERY_DEVICE: unusable %s\n", bad);
		err = -ENODEV;
		goto err_hw_teardown;
	}

	err = kite_comp_eqs_create(kdev);
	if (err) {
		dev_err(&pdev->dev, "cannot create completion EQs: %d\n", err);
		goto err_hw_teardown;
	}
	err = kite_eth_probe(kdev);
	if (err) {
		dev_err(&pdev->dev, "cannot create the Ethernet port: %d\n",
			err);
		goto err_destroy_eqs;
	}
	err = kite_aux_add(kdev);
	if (err) {
		dev_err(&pdev->dev, "cannot add the RDMA auxiliary device: %d\n",
			err);
		goto err_eth_remove;
	}
	return 0;

err_eth_remove:
	kite_eth_remove(kdev);
err_destroy_eqs:
	kite_comp_eqs_destroy(kdev);
err_hw_teardown:
	kite_hw_teardown(kdev);
	return err;
err_free_aeq:
	kite_eq_free_ring(kdev, &kdev->aeq);
err_admin_destroy:
	kite_admin_destroy(&kdev->admin);
	return err;
}

/**
 * kite_dev_stop() - take the function down, the reverse of kite_dev_start()
 * @kdev: started device
 *
 * The auxiliary device goes first (kite_ib unregisters the ib_device and
 * disassociates its user contexts), then the net_device, the completion
 * EQs and the hardware state.
 *
 * Return: 0, or -ETIMEDOUT when the device did not confirm its reset (its
 * rings are then leaked and it must not be started again).
 */
int kite_dev_stop(struct kite_dev *kdev)
{
	kite_aux_del(kdev);
	kite_eth_remove(kdev);
	kite_comp_eqs_destroy(kdev);
	return kite_hw_teardown(kdev);
}

static int kite_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	char fw[ETHTOOL_FWVERS_LEN];
	struct kite_dev *kdev;
	int err;

	kdev = kite_devlink_alloc(&pdev->dev);
	if (!kdev)
		return -ENOMEM;
	kdev->pdev = pdev;
	spin_lock_init(&kdev->event_lock);
	kite_health_init(kdev);
	pci_set_drvdata(pdev, kdev);

	err = pci_enable_device_mem(pdev);
	if (err)
		goto err_dealloc;
	err = pci_request_selected_regions(pdev, BIT(KITE_BAR_REGS) |
					   BIT(KITE_BAR_DB), KITE_DRV_NAME);
	if (err)
		goto err_disable_pci;
	pci_set_master(pdev);
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		goto err_release;
	err = kite_map_bars(kdev);
	if (err)
		goto err_release;
	err = kite_check_hw(kdev);
	if (err)
		goto err_unmap;
	/* Vectors stay masked until request_irq(): the reset may come later. */
	err = kite_setup_msix(kdev);
	if (err)
		goto err_unmap;
	kite_debugfs_add(kdev);
	/* Before the function starts: a fatal error from then on has a
	 * registered instance to report to.
	 */
	err = kite_devlink_register(kdev);
	if (err)
		goto err_free_vectors;
	err = kite_dev_start(kdev);
	if (err)
		goto err_devlink_unregister;
	mutex_lock(&kdev->state_lock);
	kdev->started = true;
	mutex_unlock(&kdev->state_lock);

	kite_fw_version_str(kdev, fw, sizeof(fw));
	dev_info(&pdev->dev,
		 "Kite NIC ABI %u.%u, fw %s, %d MSI-X vectors, %d completion EQs, %s, %s\n",
		 KITE_ABI_VER_MAJOR(kdev->caps.abi_version),
		 KITE_ABI_VER_MINOR(kdev->caps.abi_version),
		 fw, kdev->num_vectors, kdev->num_comp_eqs,
		 netdev_name(kdev->netdev),
		 dev_name(&kdev->rdma_adev->adev.dev));
	return 0;

err_devlink_unregister:
	/* A fatal event during the start may have queued a recovery. */
	kite_health_stop(kdev);
	kite_devlink_unregister(kdev);
err_free_vectors:
	kite_debugfs_del(kdev);
	pci_free_irq_vectors(pdev);
err_unmap:
	kite_unmap_bars(kdev);
err_release:
	pci_release_selected_regions(pdev, BIT(KITE_BAR_REGS) |
				     BIT(KITE_BAR_DB));
err_disable_pci:
	pci_disable_device(pdev);
err_dealloc:
	pci_set_drvdata(pdev, NULL);
	kite_health_sync(kdev);
	kite_devlink_free(kdev);
	return err;
}

/* Also the end of a hot-unplug. A function already gone from the bus
 * (surprise removal) answers nothing: its admin queue is given up first,
 * so that the teardown's commands fail at once instead of timing out.
 */
static void kite_remove(struct pci_dev *pdev)
{
	struct kite_dev *kdev = pci_get_drvdata(pdev);

	kite_health_stop(kdev);
	/* No fatal error is reported any more; devlink commands in
	 * progress end first (a recover finds removing set).
	 */
	kite_devlink_unregister(kdev);
	/* A failed recovery left the function stopped. */
	if (kdev->started) {
		if (!pci_device_is_present(pdev)) {
			dev_warn(&pdev->dev, "device gone from the bus\n");
			kite_admin_mark_dead(&kdev->admin);
		}
		kite_dev_stop(kdev);
	}
	kite_debugfs_del(kdev);
	kite_health_sync(kdev);
	pci_free_irq_vectors(pdev);
	kite_unmap_bars(kdev);
	pci_release_selected_regions(pdev, BIT(KITE_BAR_REGS) |
				     BIT(KITE_BAR_DB));
	pci_disable_device(pdev);
	pci_set_drvdata(pdev, NULL);
	kite_devlink_free(kdev);
}

/* Reboot or kexec: stop the device so that it no longer writes to memory
 * the next kernel owns. Nothing is freed; the system is going away.
 */
static void kite_shutdown(struct pci_dev *pdev)
{
	struct kite_dev *kdev = pci_get_drvdata(pdev);

	if (!kdev)
		return;
	kite_health_stop(kdev);
	if (kdev->started)
		kite_admin_mark_dead(&kdev->admin);
	kite_reset(kdev);
	pci_clear_master(pdev);
}

static struct pci_driver kite_pci_driver = {
	.name = KITE_DRV_NAME,
	.id_table = kite_pci_tbl,
	.probe = kite_probe,
	.remove = kite_remove,
	.shutdown = kite_shutdown,
};

#if IS_ENABLED(CONFIG_KITE_KUNIT_TEST)

/**
 * kite_dev_get_any() - find a probed Kite device (for the KUnit suites)
 *
 * The device is locked against unbinding until kite_dev_put().
 *
 * Return: the device, or NULL when none is bound to this driver.
 */
struct kite_dev *kite_dev_get_any(void)
{
	struct pci_dev *pdev = NULL;

	while ((pdev = pci_get_device(KITE_PCI_VENDOR_ID, KITE_PCI_DEVICE_ID,
				      pdev))) {
		device_lock(&pdev->dev);
		if (pdev->dev.driver == &kite_pci_driver.driver &&
		    pci_get_drvdata(pdev))
			return pci_get_drvdata(pdev);
		device_unlock(&pdev->dev);
	}
	return NULL;
}

/**
 * kite_dev_put() - release a device from kite_dev_get_any()
 * @kdev: device
 */
void kite_dev_put(struct kite_dev *kdev)
{
	struct pci_dev *pdev = kdev->pdev;

	device_unlock(&pdev->dev);
	pci_dev_put(pdev);
}
#endif /* CONFIG_KITE_KUNIT_TEST */

static int __init kite_init(void)
{
	int err;

	kite_debugfs_register();
	err = pci_register_driver(&kite_pci_driver);
	if (err)
		kite_debugfs_unregister();
	return err;
}
module_init(kite_init);

static void __exit kite_exit(void)
{
	pci_unregister_driver(&kite_pci_driver);
	kite_debugfs_unregister();
}
module_exit(kite_exit);
