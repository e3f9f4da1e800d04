/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kite core driver: interfaces between its files. What the auxiliary
 * drivers may use is in <linux/kite/driver.h> and <linux/kite/cmd.h>.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_H
#define KITE_H

#include <linux/kite/driver.h>

#define KITE_ENABLE_TIMEOUT_MS		1000
#define KITE_RESET_TIMEOUT_MS		1000
#define KITE_EQ_LOG_DEPTH		8	/* wanted; capped by the device */
#define KITE_AEQ_NUM			0	/* async EQ number */
#define KITE_ADMIN_DEF_TIMEOUT_MS	2000
#define KITE_AQ_LOG_DEPTH		5	/* wanted; capped by the device */
/* A device that fails again this soon after a recovery stays down; also
 * the devlink health reporter's grace period.
 */
#define KITE_RECOVER_MIN_INTERVAL_MS	10000U

/**
 * enum kite_acq_result - what kite_acq_take() found
 * @KITE_ACQ_EMPTY: no new completion (phase bit not yet flipped)
 * @KITE_ACQ_MATCH: a completion for an outstanding command
 * @KITE_ACQ_UNKNOWN: a completion naming no outstanding command (stale,
 *		      duplicate or unknown cmd_id); it was consumed and dropped
 */
enum kite_acq_result {
	KITE_ACQ_EMPTY,
	KITE_ACQ_MATCH,
	KITE_ACQ_UNKNOWN,
};

/* Status of a command that got no completion (above every u8 status). */
#define KITE_ADMIN_NO_STATUS		0x100

/* kite_admin.c: the queue */
int kite_admin_init(struct kite_admin *adm, struct device *dev,
		    void __iomem *regs, u8 aq_log, u8 acq_log);
void kite_admin_destroy(struct kite_admin *adm);
void kite_admin_process_cq(struct kite_admin *adm);
enum kite_acq_result kite_acq_take(struct kite_admin *adm,
				   struct kite_admin_ctx **ctxp, u16 *cmd_id);
int kite_admin_exec(struct kite_admin *adm, struct kite_aq_cmd *cmd,
		    void *out, size_t out_len, struct kite_aq_cqe *cqe);
void kite_admin_mark_dead(struct kite_admin *adm);
unsigned int kite_admin_timeout_ms(void);
int kite_status_to_errno(u8 status);
void kite_admin_account(struct kite_admin_stats *st, u8 opcode,
			u16 status, u64 latency_ns);
const char *kite_opcode_name(u8 opcode);
const char *kite_status_name(u8 status);
struct kite_aq_out_buf *kite_cmd_out_buf(struct kite_aq_cmd *cmd);

/* kite_cmd_enc.c: encoders and decoders (pure) */
void kite_enc_hdr(struct kite_aq_cmd *cmd, u8 opcode, u32 uctx);
void kite_enc_query(struct kite_aq_cmd *cmd, u8 opcode, u8 port);
void kite_enc_set_port(struct kite_aq_cmd *cmd, u32 mask, u32 mtu,
		       const u8 *mac);
void kite_enc_create_eq(struct kite_aq_cmd *cmd, dma_addr_t ring,
			u8 log_depth, u16 vector);
void kite_enc_destroy(struct kite_aq_cmd *cmd, u8 opcode, u32 uctx,
		      u32 handle);
void kite_enc_create_cq(struct kite_aq_cmd *cmd, u32 uctx,
			const struct kite_pbl_desc *ring, u8 log_depth,
			u16 eqn, u64 dbrec);
void kite_enc_modify_cq(struct kite_aq_cmd *cmd, u32 uctx, u32 cqn,
			const struct kite_pbl_desc *ring, u8 log_depth);
void kite_enc_query_obj(struct kite_aq_cmd *cmd, u8 opcode, u32 uctx,
			u32 handle);
void kite_enc_create_qp(struct kite_aq_cmd *cmd, u32 uctx,
			const struct kite_qp_create_params *p);
void kite_enc_modify_qp(struct kite_aq_cmd *cmd, u32 uctx, u32 qpn,
			const struct kite_qp_attr *attr);
void kite_enc_reg_mr(struct kite_aq_cmd *cmd, u32 uctx,
		     const struct kite_mr_params *p);
void kite_enc_alloc_mr(struct kite_aq_cmd *cmd, u32 pdn, u32 max_pages,
		       u32 key_variant);
void kite_enc_rereg_mr(struct kite_aq_cmd *cmd, u32 uctx,
		       const struct kite_rereg_params *p);
void kite_enc_alloc_mw(struct kite_aq_cmd *cmd, u32 uctx, u32 pdn, u8 type,
		       u32 key_variant);
void kite_enc_gid(struct kite_aq_cmd *cmd, u8 opcode, const u8 *gid,
		  u16 index, u8 type, u8 port);
void kite_dec_device_attr(const struct kite_device_attr *attr,
			  struct kite_caps *caps);
const char *kite_caps_invalid(const struct kite_caps *caps);
void kite_dec_port_attr(const struct kite_port_attr *attr,
			struct kite_port_info *info);
void kite_dec_stats(const struct kite_stats *st, struct kite_hw_stats *out);
void kite_dec_cq_info(const struct kite_aq_cqe *cqe,
		      struct kite_cq_info *info);

/* kite_eq.c */
int kite_eq_alloc_ring(struct kite_dev *kdev, struct kite_eq *eq,
		       u8 log_depth);
void kite_eq_free_ring(struct kite_dev *kdev, struct kite_eq *eq);
struct kite_eqe *kite_eq_next(struct kite_eq *eq);
void kite_eq_arm(struct kite_dev *kdev, struct kite_eq *eq);
void kite_eq_update_ci(struct kite_dev *kdev, struct kite_eq *eq);
int kite_aeq_setup(struct kite_dev *kdev);
void kite_aeq_process(struct kite_dev *kdev);
int kite_comp_eqs_create(struct kite_dev *kdev);
void kite_comp_eqs_destroy(struct kite_dev *kdev);
void kite_comp_eqs_free(struct kite_dev *kdev);

/* kite_events.c */
void kite_async_event(struct kite_dev *kdev, const struct kite_eqe *eqe);
void kite_comp_event(struct kite_dev *kdev, u32 cqn);

/* kite_main.c: the function without its PCI resources */
int kite_dev_start(struct kite_dev *kdev);
int kite_dev_stop(struct kite_dev *kdev);

/* kite_health.c */
struct netlink_ext_ack;
void kite_health_init(struct kite_dev *kdev);
int kite_health_recover(struct kite_dev *kdev, bool automatic,
			struct netlink_ext_ack *extack);
void kite_health_fatal(struct kite_dev *kdev, u32 code);
void kite_health_stop(struct kite_dev *kdev);
void kite_health_sync(struct kite_dev *kdev);

/* kite_devlink.c */
struct kite_dev *kite_devlink_alloc(struct device *dev);
void kite_devlink_free(struct kite_dev *kdev);
int kite_devlink_register(struct kite_dev *kdev);
void kite_devlink_unregister(struct kite_dev *kdev);

/* kite_debugfs.c */
void kite_debugfs_register(void);
void kite_debugfs_unregister(void);
void kite_debugfs_add(struct kite_dev *kdev);
void kite_debugfs_del(struct kite_dev *kdev);

/* kite_aux.c */
int kite_aux_add(struct kite_dev *kdev);
void kite_aux_del(struct kite_dev *kdev);

/* kite_eth.c */
int kite_eth_probe(struct kite_dev *kdev);
void kite_eth_remove(struct kite_dev *kdev);
void kite_eth_link_change(struct kite_dev *kdev, bool up);
u32 kite_eth_rx_buf_len(u32 mtu);

/* kite_ethtool.c */
extern const struct ethtool_ops kite_ethtool_ops;

#if IS_ENABLED(CONFIG_KITE_KUNIT_TEST)
/* kite_main.c */
struct kite_dev *kite_dev_get_any(void);
void kite_dev_put(struct kite_dev *kdev);
#endif

#endif /* KITE_H */
