/* The part of QEMU's TCG plugin interface (API version 1, QEMU 7.2) the profiler uses,
 * declared here from QEMU's documentation (docs/devel/tcg-plugins.rst): Debian's QEMU runs
 * plugins but ships no header. The plugin resolves these symbols from the QEMU binary. */
#ifndef PVHV_QEMU_PLUGIN_ABI_H
#define PVHV_QEMU_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#define PVHV_QEMU_PLUGIN_VERSION 1

typedef uint64_t qemu_plugin_id_t;
struct qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;

enum qemu_plugin_cb_flags {
  QEMU_PLUGIN_CB_NO_REGS = 0,
  QEMU_PLUGIN_CB_R_REGS = 1,
  QEMU_PLUGIN_CB_RW_REGS = 2,
};

typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb* tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void* userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void* userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
struct qemu_plugin_insn* qemu_plugin_tb_get_insn(const struct qemu_plugin_tb* tb, size_t index);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn* insn);
const void* qemu_plugin_insn_data(const struct qemu_plugin_insn* insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn* insn);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn* insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void* userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void* userdata);

#endif
