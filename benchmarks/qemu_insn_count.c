/* A QEMU TCG plugin (qemu-aarch64 -plugin ./qemu_insn_count.so -d plugin)
 * that prints how many guest instructions ran: each translated block adds
 * its instruction count to one counter every time it executes (an inline
 * add, exact for one vCPU thread; benchmarks/edge_bench.py runs models on
 * one thread). The edge benchmark's machine-independent cost figure.
 *
 * The functions below are QEMU's public plugin API (docs/devel/tcg-plugins
 * in QEMU's documentation), declared here as QEMU 7.2 (Debian 12's
 * qemu-user) exports them; Debian ships no plugin header. QEMU refuses a
 * plugin whose qemu_plugin_version it does not support, so a mismatch is
 * an error at start, not a miscount. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

void qemu_plugin_register_vcpu_tb_trans_cb(
    qemu_plugin_id_t id,
    void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
                                              enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
                                    void (*cb)(qemu_plugin_id_t id, void *data),
                                    void *data);
void qemu_plugin_outs(const char *string);

#define CUVIL_PLUGIN_EXPORT __attribute__((visibility("default")))

/* The API version this plugin is written against (QEMU 7.2's). */
CUVIL_PLUGIN_EXPORT int qemu_plugin_version = 1;

static uint64_t instructions;

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                           &instructions,
                                           qemu_plugin_tb_n_insns(tb));
}

static void finished(qemu_plugin_id_t id, void *data) {
  char line[64];
  (void)id;
  (void)data;
  snprintf(line, sizeof line, "cuvil-insn-count %" PRIu64 "\n", instructions);
  qemu_plugin_outs(line);
}

CUVIL_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
                                            const struct qemu_info_t *info,
                                            int argc, char **argv) {
  (void)info;
  (void)argc;
  (void)argv;
  qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
  qemu_plugin_register_atexit_cb(id, finished, NULL);
  return 0;
}
