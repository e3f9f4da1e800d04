/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: page buffer lists and memory regions.
 *
 * A struct kite_pbl_desc describes every ring created by command and every
 * MR: level 0 (one contiguous buffer), level 1 (an array of page addresses)
 * or level 2 (an array of addresses of 4 KiB level-1 chunks). The device
 * validates the descriptor and every page entry when the command executes.
 * For a ring it keeps only the descriptor and reads the entries again with
 * pci_dma_read() whenever it translates an address. For an MR it keeps a
 * copy of the validated entries while they fit KITE_MR_CACHE_BUDGET, as a
 * NIC keeps its translation tables in its own memory, and translates from
 * that copy until DEREG_MR or reset; the driver leaves an MR's list as it
 * registered it, so both ways give the same result. No host pointer into
 * guest memory is ever kept.
 *
 * The MR table also holds the fast-register MRs (kite_frwr.c) and memory
 * windows (kite_mw.c): one key space, one lookup (kite_mr_map()), entries
 * made by kite_mr_new() and freed by kite_mr_release(). REREG_MR changes a
 * regular MR in place under a new key once every check has passed.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/host-utils.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "hw/pci/pci.h"
#include "kite.h"
#include "trace.h"

#define KITE_PBL_ENTRY_SIZE     8
/* The largest MR a page list may describe: CAP_MAX_MR_SIZE and a page. */
#define KITE_MR_MAX_PBL_BYTES   (KITE_DEF_MAX_MR_SIZE + \
                                 (1ull << (63 - clz64(KITE_DEF_PAGE_SIZES))))

/* [addr, addr + len) does not wrap past 2^64; len > 0. */
bool kite_range_ok(uint64_t addr, uint64_t len)
{
    return addr + (len - 1) >= addr;
}

/*
 * [@addr, @addr + @len) does not wrap and lies within the range @mr covers
 * (an MR's, or the range a window is bound to); len > 0.
 */
bool kite_mr_covers(const KiteMr *mr, uint64_t addr, uint64_t len)
{
    return addr >= mr->iova && kite_range_ok(addr, len) &&
           addr + len - 1 <= mr->iova + mr->length - 1;
}

/* A page entry: non-zero, aligned to the page size, not wrapping. */
bool kite_pbl_entry_ok(uint64_t e, uint8_t shift)
{
    return e && QEMU_IS_ALIGNED(e, 1ull << shift) &&
           kite_range_ok(e, 1ull << shift);
}

/*
 * Reads and validates @n entries starting at @addr (an array of u64 page
 * addresses); @chunk: the entries are level-1 chunk addresses. @copy, if
 * not NULL, receives the @n entries in host order.
 */
static uint8_t kite_pbl_check_array(KiteState *s, uint64_t addr, uint64_t n,
                                    uint8_t shift, bool chunk,
                                    uint64_t *copy)
{
    uint64_t buf[KITE_PBL_ENTRIES_PER_CHUNK];
    uint64_t done, i, cnt;

    for (done = 0; done < n; done += cnt) {
        cnt = MIN(n - done, KITE_PBL_ENTRIES_PER_CHUNK);
        s->pbl_entries_read += cnt;
        if (pci_dma_read(PCI_DEVICE(s), addr + done * KITE_PBL_ENTRY_SIZE,
                         buf, cnt * KITE_PBL_ENTRY_SIZE) != MEMTX_OK) {
            qemu_log_mask(LOG_GUEST_ERROR, "kite: page list at 0x%" PRIx64
                          " not readable\n", addr);
            return KITE_STS_DMA_ERROR;
        }
        for (i = 0; i < cnt; i++) {
            uint64_t e = le64_to_cpu(buf[i]);

            if (chunk ? !e || !QEMU_IS_ALIGNED(e, KITE_PBL_CHUNK_SIZE) :
                !kite_pbl_entry_ok(e, shift)) {
                return kite_bad_param(chunk ? "level-2 chunk address" :
                                      "page list entry", e);
            }
            if (copy) {
                copy[done + i] = e;
            }
        }
    }
    return KITE_STS_OK;
}

/*
 * Validates descriptor @d for an object of at least @min_bytes (rings;
 * 0 for MRs, checked by the caller) and at most @max_bytes rounded up to a
 * page, reads and checks every page entry, and fills @pbl; @copy, if not
 * NULL, has room for the descriptor's npages and receives the page
 * addresses of a level 1 or 2 list. BAD_PARAM for a bad descriptor or
 * entry, DMA_ERROR for an unreadable list.
 */
static uint8_t kite_pbl_walk(KiteState *s, const struct kite_pbl_desc *d,
                             uint64_t min_bytes, uint64_t max_bytes,
                             KitePbl *pbl, uint64_t *copy)
{
    uint64_t addr = le64_to_cpu(d->addr);
    uint32_t npages = le32_to_cpu(d->npages);
    uint8_t shift = d->page_shift;
    uint64_t size, nchunks, c;
    uint8_t st;

    if (d->level > KITE_PBL_LEVEL_2) {
        return kite_bad_param("page list level", d->level);
    }
    if (shift >= 64 || !(KITE_DEF_PAGE_SIZES & (1ull << shift))) {
        return kite_bad_param("page shift", shift);
    }
    /* shift <= 30: npages << shift cannot overflow. */
    size = (uint64_t)npages << shift;
    if (!npages || npages > DIV_ROUND_UP(max_bytes, 1ull << shift)) {
        return kite_bad_param("number of pages", npages);
    }
    if (size < min_bytes) {
        return kite_bad_param("buffer size", size);
    }
    if (!addr) {
        return kite_bad_param("page list address", addr);
    }
    pbl->addr = addr;
    pbl->npages = npages;
    pbl->page_shift = shift;
    pbl->level = d->level;

    switch (d->level) {
    case KITE_PBL_LEVEL_DIRECT:
        if (!QEMU_IS_ALIGNED(addr, 1ull << shift) ||
            !kite_range_ok(addr, size)) {
            return kite_bad_param("buffer address", addr);
        }
        return KITE_STS_OK;
    case KITE_PBL_LEVEL_1:
        if (!QEMU_IS_ALIGNED(addr, KITE_PBL_ENTRY_SIZE) ||
            !kite_range_ok(addr, (uint64_t)npages * KITE_PBL_ENTRY_SIZE)) {
            return kite_bad_param("level-1 array address", addr);
        }
        return kite_pbl_check_array(s, addr, npages, shift, false, copy);
    default:
        nchunks = DIV_ROUND_UP(npages, KITE_PBL_ENTRIES_PER_CHUNK);
        if (!QEMU_IS_ALIGNED(addr, KITE_PBL_ENTRY_SIZE) ||
            !kite_range_ok(addr, nchunks * KITE_PBL_ENTRY_SIZE)) {
            return kite_bad_param("level-2 array address", addr);
        }
        st = kite_pbl_check_array(s, addr, nchunks, shift, true, NULL);
        if (st != KITE_STS_OK) {
            return st;
        }
        for (c = 0; c < nchunks; c++) {
            uint64_t chunk, n;

            if (pci_dma_read(PCI_DEVICE(s), addr + c * KITE_PBL_ENTRY_SIZE,
                             &chunk, sizeof(chunk)) != MEMTX_OK) {
                return KITE_STS_DMA_ERROR;
            }
            n = MIN(KITE_PBL_ENTRIES_PER_CHUNK,
                    npages - c * KITE_PBL_ENTRIES_PER_CHUNK);
            st = kite_pbl_check_array(s, le64_to_cpu(chunk), n, shift,
                                      false, copy ? copy + c *
                                      KITE_PBL_ENTRIES_PER_CHUNK : NULL);
            if (st != KITE_STS_OK) {
                return st;
            }
        }
        return KITE_STS_OK;
    }
}

uint8_t kite_pbl_load(KiteState *s, const struct kite_pbl_desc *d,
                      uint64_t min_bytes, uint64_t max_bytes, KitePbl *pbl)
{
    return kite_pbl_walk(s, d, min_bytes, max_bytes, pbl, NULL);
}

/* Reads u64 entry @index of the array at @addr. */
static bool kite_pbl_read_entry(KiteState *s, uint64_t addr, uint64_t index,
                                uint64_t *e)
{
    uint64_t v;

    if (pci_dma_read(PCI_DEVICE(s), addr + index * KITE_PBL_ENTRY_SIZE, &v,
                     sizeof(v)) != MEMTX_OK) {
        return false;
    }
    *e = le64_to_cpu(v);
    return true;
}

/*
 * Translates byte @off of the object described by @pbl into a DMA address,
 * reading the level-1/level-2 entries from guest memory now. *@contig: the
 * bytes from there to the end of the page. False when @off is beyond the
 * pages or an entry is unreadable or invalid (it changed since the object
 * was created).
 */
bool kite_pbl_translate(KiteState *s, const KitePbl *pbl, uint64_t off,
                        uint64_t *dma, uint64_t *contig)
{
    uint64_t psize = 1ull << pbl->page_shift;
    uint64_t page = off >> pbl->page_shift;
    uint64_t in_page = off & (psize - 1);
    uint64_t e, chunk;

    if (page >= pbl->npages) {
        return false;
    }
    switch (pbl->level) {
    case KITE_PBL_LEVEL_DIRECT:
        e = pbl->addr + (page << pbl->page_shift);
        break;
    case KITE_PBL_LEVEL_1:
        if (!kite_pbl_read_entry(s, pbl->addr, page, &e)) {
            return false;
        }
        break;
    default:
        if (!kite_pbl_read_entry(s, pbl->addr,
                                 page / KITE_PBL_ENTRIES_PER_CHUNK, &chunk) ||
            !chunk || !QEMU_IS_ALIGNED(chunk, KITE_PBL_CHUNK_SIZE) ||
            !kite_pbl_read_entry(s, chunk, page % KITE_PBL_ENTRIES_PER_CHUNK,
                                 &e)) {
            return false;
        }
        break;
    }
    if (!kite_pbl_entry_ok(e, pbl->page_shift)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: page list entry 0x%" PRIx64
                      " changed to an invalid value\n", e);
        return false;
    }
    *dma = e + in_page;
    *contig = psize - in_page;
    return true;
}

/* The MR or window at key index @index, or NULL. */
KiteMr *kite_mr_slot(KiteState *s, uint32_t index)
{
    return kite_table_get(&s->mr_tab, index);
}

bool kite_mr_is_window(const KiteMr *mr)
{
    return mr->kind == KITE_MR_KIND_MW1 || mr->kind == KITE_MR_KIND_MW2;
}

/*
 * MR access flags: only known bits, and a remote write or atomic right
 * only with LOCAL_WRITE (both write the memory).
 */
bool kite_mr_access_ok(uint32_t access)
{
    return !(access & ~KITE_ACCESS_ALL) &&
           (!(access & (KITE_ACCESS_REMOTE_WRITE |
                        KITE_ACCESS_REMOTE_ATOMIC)) ||
            (access & KITE_ACCESS_LOCAL_WRITE));
}

/*
 * @npages pages of 2^@shift bytes are exactly those [@iova, @iova +
 * @length) touches; @shift must be a supported page size.
 */
bool kite_mr_pages_ok(uint64_t iova, uint64_t length, uint8_t shift,
                      uint64_t npages)
{
    uint64_t psize = 1ull << shift;

    return npages == DIV_ROUND_UP((iova & (psize - 1)) + length, psize);
}

/*
 * Byte @off of @mr's pages as a DMA address and the bytes from there to
 * the end of its page: from the copy of the list when the MR has one.
 */
static bool kite_mr_translate(KiteState *s, const KiteMr *mr, uint64_t off,
                              uint64_t *dma, uint64_t *contig)
{
    uint64_t psize = 1ull << mr->pbl.page_shift;
    uint64_t page = off >> mr->pbl.page_shift;

    if (!mr->pages) {
        return kite_pbl_translate(s, &mr->pbl, off, dma, contig);
    }
    if (page >= mr->pbl.npages) {
        return false;
    }
    *dma = mr->pages[page] + (off & (psize - 1));
    *contig = psize - (off & (psize - 1));
    return true;
}

/* Room in the page-copy budget for @bytes more. */
bool kite_mr_cache_room(KiteState *s, uint64_t bytes)
{
    return bytes <= s->mr_cache_budget - MIN(s->mr_cache_budget,
                                             s->mr_cache_bytes);
}

/* Frees @mr's copy of its page list. */
void kite_mr_uncache(KiteState *s, KiteMr *mr)
{
    if (mr->pages) {
        s->mr_cache_bytes -= (uint64_t)mr->cached * sizeof(*mr->pages);
        g_free(mr->pages);
        mr->pages = NULL;
        mr->cached = 0;
    }
}

/*
 * A new MR or window (@kind) of PD @pd (number @pdn) for context @actor
 * under key variant @variant: it references the PD and the context and
 * counts as an MR or a window. NULL when no index is free.
 */
KiteMr *kite_mr_new(KiteState *s, uint8_t kind, KitePd *pd, uint32_t pdn,
                    uint32_t actor, uint8_t variant)
{
    uint32_t index;
    KiteMr *mr = kite_table_alloc(&s->mr_tab, KITE_MR_FIRST, &index);

    if (!mr) {
        return NULL;
    }
    mr->valid = true;
    mr->kind = kind;
    mr->key = kite_key_make(index, variant);
    mr->owner = actor;
    mr->pdn = pdn;
    pd->refs++;
    if (actor) {
        s->uctx[actor].refs++;
    }
    if (kite_mr_is_window(mr)) {
        s->num_mw++;
    } else {
        s->num_mr++;
    }
    return mr;
}

/*
 * Frees the MR or window @mr (DEREG_MR, DEALLOC_MW): its page copy, its
 * references on its PD and context, its index.
 */
void kite_mr_release(KiteState *s, KiteMr *mr)
{
    uint32_t index = kite_key_index(mr->key);

    kite_pd_find(s, mr->pdn)->refs--;
    if (mr->owner) {
        s->uctx[mr->owner].refs--;
    }
    if (kite_mr_is_window(mr)) {
        s->num_mw--;
    } else {
        s->num_mr--;
    }
    kite_mr_uncache(s, mr);
    mr->valid = false;
    kite_table_free(&s->mr_tab, index);
}

/* Reset and unrealize: every MR's page copy goes. */
void kite_mr_drop_all(KiteState *s)
{
    uint32_t i;

    for (i = kite_table_next(&s->mr_tab, 0); i < s->mr_tab.size;
         i = kite_table_next(&s->mr_tab, i + 1)) {
        kite_mr_uncache(s, kite_table_get(&s->mr_tab, i));
    }
    assert(!s->mr_cache_bytes);
}

/*
 * The lookup the RoCEv2 engine uses for every SGE and remote access: the
 * key exists, is valid (a fast-register MR or window may be free) and
 * matches exactly, the MR's PD is @pdn, [@addr, @addr + @len) lies within
 * the MR, and its access flags include @access (0 for a local read). A
 * window key is resolved first (kite_mw_resolve(): remote access only, the
 * window's PD, or QP @qpn for type 2B, its range and rights) to the MR it
 * is bound to. Fills up to @max_ranges DMA ranges covering the access and
 * returns KITE_CQE_SUCCESS, KITE_CQE_LOC_PROT_ERR (key, PD, bounds, too
 * many pieces, or an unreadable page list) or KITE_CQE_LOC_ACCESS_ERR
 * (flags); the responder turns the failures into a remote access error.
 * @len 0 checks the key, PD and QP only.
 */
uint8_t kite_mr_map(KiteState *s, uint32_t key, uint32_t pdn, uint32_t qpn,
                    uint32_t access, uint64_t addr, uint64_t len,
                    KiteDmaRange *ranges, unsigned max_ranges,
                    unsigned *nranges)
{
    KiteMr *mr = kite_mr_slot(s, kite_key_index(key));
    uint64_t off, dma, contig;
    unsigned n = 0;
    uint8_t st;

    *nranges = 0;
    if (!mr || !mr->live || mr->key != key) {
        return KITE_CQE_LOC_PROT_ERR;
    }
    if (kite_mr_is_window(mr)) {
        /* The window checked bounds and rights; its MR grants them. */
        mr = kite_mw_resolve(s, mr, pdn, qpn, access, addr, len, &st);
        if (!mr) {
            return st;
        }
        access = 0;
    } else if (mr->pdn != pdn) {
        return KITE_CQE_LOC_PROT_ERR;
    }
    if (mr->dma_all) {
        if (len && !kite_range_ok(addr, len)) {
            return KITE_CQE_LOC_PROT_ERR;
        }
    } else if (len && !kite_mr_covers(mr, addr, len)) {
        return KITE_CQE_LOC_PROT_ERR;
    }
    if (!len) {
        return KITE_CQE_SUCCESS;
    }
    if ((mr->access & access) != access) {
        return KITE_CQE_LOC_ACCESS_ERR;
    }
    if (mr->dma_all) {
        if (!max_ranges) {
            return KITE_CQE_LOC_PROT_ERR;
        }
        ranges[0].addr = addr;
        ranges[0].len = len;
        *nranges = 1;
        return KITE_CQE_SUCCESS;
    }
    /* Byte iova + x lives at offset (iova mod page) + x of the pages. */
    off = (mr->iova & ((1ull << mr->pbl.page_shift) - 1)) + (addr - mr->iova);
    while (len) {
        uint64_t piece;

        if (!kite_mr_translate(s, mr, off, &dma, &contig)) {
            return KITE_CQE_LOC_PROT_ERR;
        }
        piece = MIN(len, contig);
        if (n && ranges[n - 1].addr + ranges[n - 1].len == dma) {
            ranges[n - 1].len += piece;
        } else {
            if (n == max_ranges) {
                return KITE_CQE_LOC_PROT_ERR;
            }
            ranges[n].addr = dma;
            ranges[n].len = piece;
            n++;
        }
        off += piece;
        len -= piece;
    }
    *nranges = n;
    return KITE_CQE_SUCCESS;
}

/*
 * An MR's range: @length 1 .. CAP_MAX_MR_SIZE, [@iova, @iova + @length)
 * not wrapping, and exactly the pages it touches in @d, checked before the
 * page list is read (kite_pbl_walk() checks the shift). BAD_PARAM if not.
 */
static uint8_t kite_mr_range_check(uint64_t iova, uint64_t length,
                                   const struct kite_pbl_desc *d)
{
    if (!length || length > KITE_DEF_MAX_MR_SIZE) {
        return kite_bad_param("MR length", length);
    }
    if (!kite_range_ok(iova, length)) {
        return kite_bad_param("MR iova + length", iova);
    }
    if (d->page_shift < 64 &&
        (KITE_DEF_PAGE_SIZES & (1ull << d->page_shift)) &&
        !kite_mr_pages_ok(iova, length, d->page_shift,
                          le32_to_cpu(d->npages))) {
        return kite_bad_param("MR npages for iova/length",
                              le32_to_cpu(d->npages));
    }
    return KITE_STS_OK;
}

/*
 * Validates an MR's page list @d (as kite_pbl_walk()) into @pbl and, while
 * the budget allows (@freed: bytes the caller will give back on success),
 * copies a level 1 or 2 list into a new *@pages (else NULL). Nothing is
 * kept on failure.
 */
static uint8_t kite_mr_walk_cached(KiteState *s,
                                   const struct kite_pbl_desc *d,
                                   uint64_t freed, KitePbl *pbl,
                                   uint64_t **pages)
{
    /* npages is checked against the range before this. */
    uint64_t bytes = (uint64_t)le32_to_cpu(d->npages) * sizeof(**pages);
    uint8_t st;

    *pages = NULL;
    if (d->level != KITE_PBL_LEVEL_DIRECT &&
        kite_mr_cache_room(s, bytes > freed ? bytes - freed : 0)) {
        *pages = g_try_malloc(bytes);
    }
    st = kite_pbl_walk(s, d, 0, KITE_MR_MAX_PBL_BYTES, pbl, *pages);
    if (st != KITE_STS_OK) {
        g_free(*pages);
        *pages = NULL;
    }
    return st;
}

uint8_t kite_cmd_reg_mr(KiteState *s, const struct kite_aq_cmd *cmd,
                        KiteCmdResult *res)
{
    const struct kite_cmd_reg_mr *c = &cmd->reg_mr;
    uint32_t actor = le32_to_cpu(cmd->hdr.uctx);
    uint32_t pdn = le32_to_cpu(c->pdn);
    uint32_t access = le32_to_cpu(c->access);
    uint32_t kv = le32_to_cpu(c->key_variant);
    uint64_t iova = le64_to_cpu(c->iova);
    uint64_t length = le64_to_cpu(c->length);
    bool dma_all = kv & KITE_MR_DMA_ALL;
    KitePbl pbl = { 0 };
    uint64_t *pages = NULL;
    KitePd *pd;
    KiteMr *mr;
    uint8_t st;

    if (kv & ~(KITE_MR_DMA_ALL | KITE_KEY_VARIANT_MASK)) {
        return kite_bad_param("key_variant", kv);
    }
    if (!kite_mr_access_ok(access)) {
        return kite_bad_param("MR access flags", access);
    }
    pd = kite_pd_get(s, pdn, actor, &st);
    if (!pd) {
        return st;
    }
    if (dma_all) {
        /* The MR of get_dma_mr(): kernel only, local access only. */
        if (actor) {
            qemu_log_mask(LOG_GUEST_ERROR, "kite: DMA MR from context %u\n",
                          actor);
            return KITE_STS_PERMISSION;
        }
        if (access & (KITE_ACCESS_REMOTE | KITE_ACCESS_MW_BIND)) {
            return kite_bad_param("DMA MR access flags", access);
        }
        if (c->pbl.addr || c->pbl.npages || c->pbl.page_shift ||
            c->pbl.level) {
            return kite_bad_param("DMA MR page list", c->pbl.npages);
        }
        iova = length = 0;
    } else {
        st = kite_mr_range_check(iova, length, &c->pbl);
        if (st != KITE_STS_OK) {
            return st;
        }
    }
    /* A full table before the page list is read: the cheap check first. */
    if (!kite_obj_room(s, s->num_mr, KITE_DEF_MAX_MR)) {
        return KITE_STS_NO_RESOURCES;
    }
    if (!dma_all) {
        st = kite_mr_walk_cached(s, &c->pbl, 0, &pbl, &pages);
        if (st != KITE_STS_OK) {
            return st;
        }
    }
    mr = kite_mr_new(s, KITE_MR_KIND_REGULAR, pd, pdn, actor,
                     kv & KITE_KEY_VARIANT_MASK);
    if (!mr) {
        g_free(pages);
        return KITE_STS_NO_RESOURCES;
    }
    mr->live = true;
    mr->dma_all = dma_all;
    mr->access = access;
    mr->iova = iova;
    mr->length = length;
    mr->pbl = pbl;
    mr->pages = pages;
    if (pages) {
        mr->cached = pbl.npages;
        s->mr_cache_bytes += (uint64_t)pbl.npages * sizeof(*pages);
    }
    res->out[0] = mr->key;
    trace_kite_mr_reg(mr->key, pdn, actor, access, iova, length, pbl.level,
                      pbl.npages, !!pages);
    return KITE_STS_OK;
}

/*
 * An MR of context @actor by its key: the whole key of a regular MR (a
 * stale variant is an unknown key); for a fast-register MR its index, as
 * the driver's key may be a variant whose REG_MR WQE never executed.
 */
static KiteMr *kite_mr_get(KiteState *s, uint32_t key, uint32_t actor,
                           uint8_t *status)
{
    KiteMr *mr = kite_mr_slot(s, kite_key_index(key));

    if (!mr || kite_mr_is_window(mr) ||
        (mr->kind == KITE_MR_KIND_REGULAR && mr->key != key)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: unknown MR key 0x%x\n", key);
        *status = KITE_STS_BAD_HANDLE;
        return NULL;
    }
    if (mr->owner != actor) {
        *status = KITE_STS_PERMISSION;
        return NULL;
    }
    return mr;
}

uint8_t kite_cmd_dereg_mr(KiteState *s, const struct kite_aq_cmd *cmd,
                          KiteCmdResult *res)
{
    uint32_t key = le32_to_cpu(cmd->destroy.handle);
    uint32_t actor = le32_to_cpu(cmd->hdr.uctx);
    uint8_t st;
    KiteMr *mr = kite_mr_get(s, key, actor, &st);

    if (!mr) {
        return st;
    }
    if (mr->mw_bound) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: DEREG_MR of 0x%x with %u "
                      "windows bound\n", key, mr->mw_bound);
        return KITE_STS_BUSY;
    }
    kite_mr_release(s, mr);
    trace_kite_mr_dereg(key, actor);
    return KITE_STS_OK;
}

/* The fields of REREG_MR parts that the flags do not name are zero. */
static bool kite_rereg_unnamed_zero(const struct kite_cmd_rereg_mr *c,
                                    uint32_t flags)
{
    const struct kite_pbl_desc *d = &c->pbl;

    if (!(flags & KITE_REREG_TRANS) &&
        (c->iova || c->length || d->addr || d->npages || d->page_shift ||
         d->level || d->reserved[0] || d->reserved[1])) {
        return false;
    }
    if (!(flags & KITE_REREG_PD) && c->pdn) {
        return false;
    }
    return (flags & KITE_REREG_ACCESS) || !c->access;
}

/*
 * REREG_MR: a new translation, PD or access for a regular MR under a new
 * key variant of the same index; every check passes before anything
 * changes.
 */
uint8_t kite_cmd_rereg_mr(KiteState *s, const struct kite_aq_cmd *cmd,
                          KiteCmdResult *res)
{
    const struct kite_cmd_rereg_mr *c = &cmd->rereg_mr;
    uint32_t actor = le32_to_cpu(cmd->hdr.uctx);
    uint32_t key = le32_to_cpu(c->key);
    uint32_t flags = le32_to_cpu(c->flags);
    uint32_t kv = le32_to_cpu(c->key_variant);
    uint32_t pdn, access;
    uint64_t iova, length;
    KitePbl pbl;
    uint64_t *pages = NULL;
    KitePd *pd = NULL;
    KiteMr *mr = kite_mr_slot(s, kite_key_index(key));
    uint8_t st;

    if (!mr || mr->kind != KITE_MR_KIND_REGULAR || mr->key != key) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: REREG_MR of unknown key "
                      "0x%x\n", key);
        return KITE_STS_BAD_HANDLE;
    }
    if (mr->owner != actor) {
        return KITE_STS_PERMISSION;
    }
    if (mr->dma_all) {
        return KITE_STS_NOT_SUPPORTED;
    }
    if (!flags || (flags & ~(KITE_REREG_TRANS | KITE_REREG_PD |
                             KITE_REREG_ACCESS))) {
        return kite_bad_param("REREG_MR flags", flags);
    }
    iova = mr->iova;
    length = mr->length;
    pbl = mr->pbl;
    if (flags & KITE_REREG_TRANS) {
        iova = le64_to_cpu(c->iova);
        length = le64_to_cpu(c->length);
        st = kite_mr_range_check(iova, length, &c->pbl);
        if (st != KITE_STS_OK) {
            return st;
        }
    }
    pdn = flags & KITE_REREG_PD ? le32_to_cpu(c->pdn) : mr->pdn;
    if (flags & KITE_REREG_PD) {
        pd = kite_pd_get(s, pdn, actor, &st);
        if (!pd) {
            return st;
        }
    }
    access = flags & KITE_REREG_ACCESS ? le32_to_cpu(c->access) : mr->access;
    if (!kite_mr_access_ok(access)) {
        return kite_bad_param("MR access flags", access);
    }
    if (!kite_rereg_unnamed_zero(c, flags)) {
        return kite_bad_param("REREG_MR field of a part not named", flags);
    }
    if (kv & ~KITE_KEY_VARIANT_MASK) {
        return kite_bad_param("key_variant", kv);
    }
    if (c->reserved) {
        return kite_bad_param("REREG_MR reserved", le32_to_cpu(c->reserved));
    }
    if (mr->mw_bound) {
        return KITE_STS_BUSY;
    }
    if (flags & KITE_REREG_TRANS) {
        st = kite_mr_walk_cached(s, &c->pbl, (uint64_t)mr->cached *
                                 sizeof(*mr->pages), &pbl, &pages);
        if (st != KITE_STS_OK) {
            return st;
        }
        kite_mr_uncache(s, mr);
        mr->pages = pages;
        if (pages) {
            mr->cached = pbl.npages;
            s->mr_cache_bytes += (uint64_t)pbl.npages * sizeof(*pages);
        }
    }
    if (pd) {
        kite_pd_find(s, mr->pdn)->refs--;
        pd->refs++;
    }
    mr->pdn = pdn;
    mr->access = access;
    mr->iova = iova;
    mr->length = length;
    mr->pbl = pbl;
    mr->key = kite_key_make(kite_key_index(key), kv);
    res->out[0] = mr->key;
    trace_kite_mr_rereg(key, mr->key, flags, pdn, access, iova, length,
                        !!mr->pages);
    return KITE_STS_OK;
}

/*
 * x-mr-map and x-mr-map-result: test-only QOM properties through which the
 * qtests run kite_mr_map(), the check every SGE and remote access of the
 * data path makes, with any key, PD, access and range (qom-set x-mr-map
 * {key, pdn, access, addr, len[, max-ranges][, qpn]}: qpn the QP a type-2B
 * window must be bound to), and read what it finds
 * (qom-get x-mr-map-result: {status, ranges: [{addr, len}, ...]}). The
 * lookup runs when the result is read, so it sees the MR table and the page
 * lists as they are then. The qtests get every outcome of the lookup this
 * way, including the DMA ranges, without an admin opcode outside the ABI.
 */
static void kite_mr_probe_get(Object *obj, Visitor *v, const char *name,
                              void *opaque, Error **errp)
{
    KiteMrProbe *p = &KITE(obj)->mr_probe;

    if (!visit_start_struct(v, name, NULL, 0, errp)) {
        return;
    }
    if (visit_type_uint32(v, "key", &p->key, errp) &&
        visit_type_uint32(v, "pdn", &p->pdn, errp) &&
        visit_type_uint32(v, "access", &p->access, errp) &&
        visit_type_uint64(v, "addr", &p->addr, errp) &&
        visit_type_uint64(v, "len", &p->len, errp) &&
        visit_type_uint32(v, "max-ranges", &p->max_ranges, errp) &&
        visit_type_uint32(v, "qpn", &p->qpn, errp)) {
        visit_check_struct(v, errp);
    }
    visit_end_struct(v, NULL);
}

static void kite_mr_probe_set(Object *obj, Visitor *v, const char *name,
                              void *opaque, Error **errp)
{
    KiteState *s = KITE(obj);
    KiteMrProbe p = { .max_ranges = KITE_MR_PROBE_MAX_RANGES };
    bool present, ok;

    if (!visit_start_struct(v, name, NULL, 0, errp)) {
        return;
    }
    ok = visit_type_uint32(v, "key", &p.key, errp) &&
         visit_type_uint32(v, "pdn", &p.pdn, errp) &&
         visit_type_uint32(v, "access", &p.access, errp) &&
         visit_type_uint64(v, "addr", &p.addr, errp) &&
         visit_type_uint64(v, "len", &p.len, errp) &&
         (!visit_optional(v, "max-ranges", &present) ||
          visit_type_uint32(v, "max-ranges", &p.max_ranges, errp)) &&
         (!visit_optional(v, "qpn", &present) ||
          visit_type_uint32(v, "qpn", &p.qpn, errp)) &&
         visit_check_struct(v, errp);
    visit_end_struct(v, NULL);
    if (!ok) {
        return;
    }
    if (!p.max_ranges || p.max_ranges > KITE_MR_PROBE_MAX_RANGES) {
        error_setg(errp, "%s: max-ranges must be 1 to %u", name,
                   KITE_MR_PROBE_MAX_RANGES);
        return;
    }
    if (p.len > KITE_MR_PROBE_MAX_LEN) {
        error_setg(errp, "%s: len must be at most %" PRIu64, name,
                   (uint64_t)KITE_MR_PROBE_MAX_LEN);
        return;
    }
    s->mr_probe = p;
}

/* One {addr, len} element of the ranges list. */
static bool kite_mr_probe_range(Visitor *v, KiteDmaRange *r, Error **errp)
{
    bool ok;

    if (!visit_start_struct(v, NULL, NULL, 0, errp)) {
        return false;
    }
    ok = visit_type_uint64(v, "addr", &r->addr, errp) &&
         visit_type_uint64(v, "len", &r->len, errp) &&
         visit_check_struct(v, errp);
    visit_end_struct(v, NULL);
    return ok;
}

static void kite_mr_probe_result(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    KiteState *s = KITE(obj);
    const KiteMrProbe *p = &s->mr_probe;
    KiteDmaRange r[KITE_MR_PROBE_MAX_RANGES];
    unsigned i, n;
    uint8_t st;
    bool was;

    /* The page lists are read from the monitor, not a guest access. */
    was = kite_io_enter(s);
    st = kite_mr_map(s, p->key, p->pdn, p->qpn, p->access, p->addr, p->len,
                     r, p->max_ranges, &n);
    kite_io_leave(s, was);
    trace_kite_mr_probe(p->key, p->pdn, p->access, p->addr, p->len, st, n);
    if (!visit_start_struct(v, name, NULL, 0, errp)) {
        return;
    }
    if (!visit_type_uint8(v, "status", &st, errp) ||
        !visit_start_list(v, "ranges", NULL, 0, errp)) {
        goto out;
    }
    for (i = 0; i < n; i++) {
        if (!kite_mr_probe_range(v, &r[i], errp)) {
            break;
        }
    }
    visit_end_list(v, NULL);
    if (i == n) {
        visit_check_struct(v, errp);
    }
out:
    visit_end_struct(v, NULL);
}

void kite_mr_instance_init(KiteState *s)
{
    s->mr_probe.max_ranges = KITE_MR_PROBE_MAX_RANGES;
}

void kite_mr_class_init(ObjectClass *klass)
{
    object_class_property_add(klass, "x-mr-map", "KiteMrMap",
                              kite_mr_probe_get, kite_mr_probe_set,
                              NULL, NULL);
    object_class_property_set_description(klass, "x-mr-map",
                                          "test only: the MR lookup that "
                                          "x-mr-map-result runs");
    object_class_property_add(klass, "x-mr-map-result", "KiteMrMapResult",
                              kite_mr_probe_result, NULL, NULL, NULL);
    object_class_property_set_description(klass, "x-mr-map-result",
                                          "test only: the outcome of the "
                                          "x-mr-map lookup now");
}
