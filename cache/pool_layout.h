/* SPDX-License-Identifier: MIT */
/*
 * pool_layout.h - the shared-memory layout of a global buffer pool, version 7.
 *
 * This is the contract between every process that maps a pool: accelfs
 * daemons (read-write) and the monitor and tools (read-only). Everything here
 * is fixed-width, naturally aligned and position-independent (indices and
 * offsets, never pointers). Change anything and bump POOL_LAYOUT_VERSION; an
 * attacher refuses a pool whose version, magic, mutex size, byte order or
 * geometry checksum is not what it expects.
 *
 * Segment, in this order (each part aligned to 64 bytes, data to 4096):
 *
 *   +--------------------------+  0
 *   | struct pool_header       |  identity, geometry, files lock, pool flags
 *   +--------------------------+  off_shards
 *   | struct pool_shard  [S]   |  S shard locks, clock hands, pool counters
 *   +--------------------------+  off_files
 *   | struct pool_fslot  [F]   |  file table: identity, quota, epoch, stats, path
 *   +--------------------------+  off_fchains
 *   | uint32_t fchain    [FC]  |  file hash heads (dev, ino) -> slot
 *   +--------------------------+  off_chains
 *   | uint32_t chain  [S * C]  |  buffer hash heads, C per shard
 *   +--------------------------+  off_bufs
 *   | struct pool_buf    [N]   |  buffer descriptors, N = S * bufs_per_shard
 *   +--------------------------+  off_mrc
 *   | miss-ratio curve state   |  mrc_size bytes, cache/mrc.h (SHARDS)
 *   +--------------------------+  off_data (4096-aligned)
 *   | data         [N * bsize] |  the buffers themselves
 *   +--------------------------+  total_size
 *
 * Buffers [s * bufs_per_shard, (s + 1) * bufs_per_shard) belong to shard s for
 * their whole life. A bucket (file slot f, bucket index b) lives only in shard
 * pool_hash(f, b) % S, in chain (pool_hash(f, b) / S) % C of that shard.
 *
 * CONCURRENCY PROTOCOL (the invariants everything else relies on)
 *
 * Locks. Each shard has a robust, process-shared mutex; the header has one
 * more, files_lock, for the file table. Lock order: files_lock before any
 * shard lock; shard locks in ascending index. Only pool_shard_recount() ever holds
 * more than one shard lock. Nothing sleeps or does I/O under a lock; the
 * longest critical section is one memcpy of at most one bucket (fill/write).
 * No wait for a lock is unbounded (cache/shmlock.h): a holder that is alive
 * but stopped cannot be told from a slow one, so past SHM_LOCK_WAIT_NS the
 * waiter gives up, counts lock_timeouts and goes on without the lock: a read
 * is served from SOURCE, a fill is dropped, a write or truncate that cannot
 * drop its buckets bumps the file's epoch instead (I4, lock-free), and when
 * even that is refused (dirty buffers, I8) the write fails (-ETIMEDOUT)
 * before SOURCE is touched. Seqlock retries (I2, I6) are bounded as well.
 *
 * Trust. A process attaches only to a segment that is a regular file owned
 * by its effective uid with no mode bit beyond its pool_mode, or, when
 * pool_mode grants the group, one whose group is one of the process's
 * (docs/cache.md, "Trust"). Past that check the contents are still treated
 * as untrusted: every index is bounds-checked before use.
 *
 * I1. A descriptor's key (file, epoch, bucket), its len, state and data, the
 *     chains of its shard and the shard's clock hand change only under that
 *     shard's lock. Every change to key, len or data happens between two
 *     increments of the descriptor's seq: odd seq means "being changed".
 * I2. A reader takes no lock for a hit: it walks the chain with atomic loads,
 *     loads seq (acquire), checks it is even and the key matches, copies the
 *     data, issues an acquire fence and reloads seq; equal means the copy is
 *     exact. Any other outcome is retried, and after a few retries (e.g. a
 *     writer died with seq odd) the reader takes the shard lock, which runs
 *     recovery if needed. A concurrent chain change can make the lock-free
 *     walk miss a present bucket; never can it return wrong bytes. A false
 *     miss costs one redundant backend read, after which pool_buf_fill finds the
 *     bucket already present.
 * I3. Descriptors are the truth; chains are an index. A chain may be rebuilt
 *     from the descriptors at any time under the shard lock (crash recovery
 *     does exactly that). A descriptor is reachable iff state is VALID and its
 *     epoch equals its file slot's current epoch; everything else is garbage
 *     the clock may reuse at once.
 * I4. A file slot's epoch (high half of fslot.residency) only grows; bumping
 *     it makes every buffer of the file unreachable in O(1) (invalidation,
 *     validator change, slot reuse). The low half counts reachable buffers;
 *     both halves change together by compare-and-swap, so a count update for
 *     an old epoch can never leak into a new one.
 * I5. fslot.wseq grows on every event that can make cached bytes wrong, and
 *     always before the buffers concerned are touched: truncation and
 *     invalidation bump it once after the backend changed; a write bumps it
 *     at pool_buf_write_begin(), before the backend write, and again at
 *     pool_buf_write_end(). A fill carries a ticket (epoch, wseq, busy) taken
 *     before its backend read; pool_buf_fill() inserts under the ticket's epoch
 *     only if the ticket was not busy and epoch and wseq are still the
 *     ticket's, checked under the shard lock. pool_buf_write_begin() raises
 *     wactive and the lease, bumps wseq, then drops the buckets the write
 *     overlaps, each under its shard lock. So a fill that read the old bytes
 *     either took its ticket while the write was active (busy: refused), or
 *     before the bump (wseq changed: refused, or it got in first and the
 *     drop removes it). A writer that dies between begin and end leaves
 *     wactive raised: its file's tickets stay busy until the lease lapses,
 *     by which time the dead writer's I/O has settled.
 * I6. A file slot's identity (dev, ino, validator, path) changes only under
 *     files_lock and only with idgen odd; handles remember the even idgen
 *     they were issued under and see -ESTALE once it moves. Lock-free readers
 *     of identity (the monitor) use idgen as a seqlock.
 * I7. Counters are monotonically increasing relaxed atomics; a reader may see
 *     them slightly out of date with each other, never torn.
 * I8. Deferred write. A DIRTY buffer holds bytes SOURCE does not have yet:
 *     [dirty_lo, dirty_hi) must reach SOURCE, written by the daemon whose pid
 *     is owner (the only one that has the file open for it). The clock never
 *     takes a DIRTY buffer and an epoch bump is refused while the slot has
 *     dirty buffers (pool_file_get keeps the buffers of a file with dirty
 *     data whose validator moved, pool_file_invalidate returns -EBUSY), so
 *     dirty bytes are never dropped silently; a truncate drops the ones past
 *     the new end. The count and the bump exclude each other through one
 *     word, fslot.dirty = bumper pid << 32 | dirty buffers: a bump first
 *     claims the word from 0 (no dirty buffer, nobody bumping) to its pid,
 *     bumps the epoch and clears it; a buffer becomes dirty only after its
 *     count was taken while no bump was under way and the epoch and idgen
 *     it was found under were seen unchanged after that. A bumper that died
 *     holding the word is taken over by the next one (its pid is gone).
 *     Dirty bytes are changed in place only between pool_buf_write_begin(KEEP)
 *     and pool_buf_write_end(), so tickets keep working (I5). A flush copies the
 *     bytes out under the seqlock, writes them outside any lock, and clears
 *     DIRTY only if seq did not move meanwhile; otherwise the buffer stays
 *     dirty and is written again. A buffer whose owner no longer exists is
 *     recovered (I9).
 * I9. Recovery of a dead owner's dirty buffers (cache/recover.c). The slot
 *     records the file's handle (name_to_handle_at: it carries the inode's
 *     generation, so a reused inode number does not match) with dev and
 *     ino. A recoverer (a daemon attaching, a live daemon's flusher, `accel
 *     pool --recover`) copies the identity out under files_lock, opens the
 *     file by that handle itself, O_PATH first, and goes on only for a
 *     regular file with that dev and ino: then it claims the buffers, one
 *     by one under their shard lock, by changing owner from the dead pid to
 *     its thread id (alive for kill(2) as long as the thread is; so two
 *     recoverers never write the same buffer, each writes the ones it
 *     claimed, and a daemon's own buffers, owned by its pid and written
 *     under its per-file lock, are never among them), writes them through
 *     its own O_WRONLY descriptor, fdatasync()s, and cleans them as an
 *     owner's flush does
 *     (I8); the dirty bytes of a buffer flagged APPEND (deferred by an
 *     O_APPEND handle of a shared-mode daemon: SOURCE's end may have
 *     moved since, by another host's appends) are written, in bucket
 *     order, with O_APPEND instead of at their offset, as their owner
 *     would have. APPEND is set or cleared each time a buffer becomes
 *     DIRTY and means nothing without it.
 *     A recoverer that dies leaves its claimed buffers to the next.
 *     A write that fails hands them back to owner 0 (nobody: the next pass
 *     retries). Only when the file is provably not the same one (handle
 *     stale, dev/ino/type differ), or cannot be proved to be (no handle
 *     recorded, a pool others can write, the handle cannot be opened here)
 *     are they dropped by pool_dirty_reap_slot() and counted as dirty_lost;
 *     recovered ones count as dirty_recovered. The handle's bytes are
 *     untrusted: fh_bytes is bounded before use, and a handle is used only
 *     from a pool owned by this uid with mode 0600 (docs/security.md).
 *
 * Crash recovery. A process may die anywhere. Lock-free readers hold nothing.
 * A shard lock held by a dead process returns EOWNERDEAD to the next locker,
 * which frees every clean descriptor with odd seq (its data was half
 * written) but keeps a DIRTY one (I8: its acknowledged bytes exist nowhere
 * else; only the unacknowledged write under way may be torn), rebuilds all
 * chains of the shard from the descriptors (I3), marks the mutex consistent
 * and sets header.recount_pending; a later pool_shard_recount() takes all
 * shard locks and recomputes every residency count from the
 * descriptors. files_lock recovery rebuilds the file chains from the slots,
 * finishes or undoes a half-done identity change (idgen odd -> slot freed, its
 * epoch bumped) and recomputes header.reserved. Recovery is idempotent: dying
 * during recovery leaves the mutex in EOWNERDEAD for the next one.
 */
#ifndef ACCELFS_CACHE_POOL_LAYOUT_H
#define ACCELFS_CACHE_POOL_LAYOUT_H

#include <pthread.h>
#include <stdint.h>

#define POOL_MAGIC 0x31424c4643434158ULL /* "XACCFLB1" little-endian */
#define POOL_LAYOUT_VERSION                                                  \
	6U /* 4: lock_timeouts; 5: file handle in the slot, dirty_recovered, \
	    * passthrough counters; 6: fchain_seq; 7: POOL_BUF_F_APPEND */
#define POOL_ENDIAN_TAG 0x01020304U
#define POOL_NONE UINT32_MAX		  /* "no index" in chains and descriptors */
#define POOL_PATH_LEN 64		  /* bytes of path kept per file, NUL included */
#define POOL_FH_MAX 56			  /* bytes of file handle kept per file */
#define POOL_WRITE_LEASE_NS 5000000000ULL /* a write's claim on its file lapses after 5 s */
#define POOL_NAME_LEN 64
#define POOL_USAGE_MAX 3 /* clock counter ceiling */

/* A mutex in a slot of fixed size, so the layout does not move with libc. */
union pool_mutex {
	pthread_mutex_t m;
	uint8_t pad[64];
};

/* Per-file and per-pool statistics; see docs/cache.md for the meaning. */
enum pool_counter {
	POOL_C_LOCAL_ATTEMPTS,
	POOL_C_LOCAL_HITS,
	POOL_C_GLOBAL_ATTEMPTS,
	POOL_C_GLOBAL_HITS,
	POOL_C_BACKEND_READS,
	POOL_C_BACKEND_READ_BYTES,
	POOL_C_BACKEND_WRITES,
	POOL_C_BACKEND_WRITE_BYTES,
	POOL_C_GBUF_READ_IOS,		    /* backend reads that filled a global buffer */
	POOL_C_GBUF_WRITE_IOS,		    /* writes that updated a global buffer */
	POOL_C_LBUF_READ_IOS,		    /* backend reads that filled a local buffer */
	POOL_C_LBUF_WRITE_IOS,		    /* writes that updated a local buffer */
	POOL_C_DEFERRED_WRITES,		    /* writes kept in a dirty buffer, not yet on SOURCE */
	POOL_C_FLUSH_WRITES,		    /* backend writes that flushed dirty buffers */
	POOL_C_FLUSH_ERRORS,		    /* flushes that failed (reported at fsync/close) */
	POOL_C_RA_ISSUED,		    /* buckets prefetched by read-ahead */
	POOL_C_RA_USED,			    /* prefetched buckets later read */
	POOL_C_RA_WASTED,		    /* prefetched buckets evicted or dropped unread */
	POOL_C_FILE_MAX,		    /* counters above are kept per file and per pool */
	POOL_C_EVICTIONS = POOL_C_FILE_MAX, /* reachable buffers reused */
	POOL_C_FILL_DROPS,		    /* fills refused: stale ticket or no evictable buffer */
	POOL_C_RECOVERIES,		    /* locks recovered from a dead owner */
	POOL_C_INVALIDATIONS,		    /* buffers dropped by write/truncate/invalidate */
	POOL_C_DIRTY_LOST,	/* dirty buffers dropped: their file is not provably the same */
	POOL_C_DIRTY_RECOVERED, /* dirty buffers of a dead owner written back (I9) */
	POOL_C_LOCK_TIMEOUTS,	/* lock waits given up after SHM_LOCK_WAIT_NS */
	POOL_C_PT_OPENS,	/* opens handed to kernel passthrough */
	POOL_C_PT_FALLBACKS,	/* ... that passthrough refused: served by a daemon */
	POOL_C_POOL_MAX,
};

struct pool_header {
	/* Immutable after creation; covered by geometry_sum. */
	uint64_t magic;	       /* POOL_MAGIC, stored last (release) at creation */
	uint32_t version;      /* POOL_LAYOUT_VERSION */
	uint32_t header_size;  /* sizeof(struct pool_header) */
	uint32_t mutex_size;   /* sizeof(pthread_mutex_t) of the creator */
	uint32_t endian;       /* POOL_ENDIAN_TAG as the creator stored it */
	uint64_t total_size;   /* bytes in the segment */
	uint32_t bucket_size;  /* bytes per buffer, power of two, 4 KiB..4 MiB */
	uint32_t bucket_shift; /* log2(bucket_size) */
	uint32_t nbufs;	       /* buffers in the pool = nshards * bufs_per_shard */
	uint32_t nshards;      /* power of two */
	uint32_t bufs_per_shard;
	uint32_t chains_per_shard; /* power of two */
	uint32_t nfiles;	   /* file slots */
	uint32_t nfchains;	   /* file hash heads, power of two */
	uint64_t off_shards;	   /* byte offsets of the parts, see the diagram */
	uint64_t off_files;
	uint64_t off_fchains;
	uint64_t off_chains;
	uint64_t off_bufs;
	uint64_t off_mrc;
	uint64_t mrc_size;
	uint64_t off_data;
	uint64_t created_ns; /* CLOCK_REALTIME at creation */
	uint32_t creator_pid;
	uint32_t pad0;
	char name[POOL_NAME_LEN]; /* shm name, NUL-terminated */
	uint64_t geometry_sum;	  /* FNV-1a of every field above but magic */
	uint8_t pad1[40];

	/* Mutable. */
	union pool_mutex files_lock; /* file table, fchains (atomic stores), reserved */
	uint32_t recount_pending;    /* atomic: residency counts need pool_shard_recount() */
	uint32_t reserved;	     /* files_lock + atomic: sum of quotas of used slots */
	uint32_t files_used;	     /* files_lock + atomic: slots in state USED */
	uint32_t file_hint;	     /* files_lock: where the next free-slot scan starts */
	uint64_t tick;		     /* files_lock: logical clock for slot LRU */
	uint32_t fchain_seq;	     /* files_lock + atomic: odd while file chains change */
	uint8_t pad2[36];
};

struct pool_shard {
	union pool_mutex lock; /* the shard lock, robust and process-shared */
	uint32_t hand;	       /* lock: clock hand, 0..bufs_per_shard-1 */
	uint32_t pad[15];
	uint64_t c[(POOL_C_POOL_MAX + 7) & ~7]; /* atomic counters for buckets of this shard */
};

enum pool_fslot_state {
	POOL_FSLOT_FREE = 0,
	POOL_FSLOT_USED = 1,
};

#define POOL_QUOTA_ALL UINT32_MAX
#define POOL_FILE_F_RELAXED 0x01 /* a handle has it open with sync=relaxed (display) */

struct pool_fslot {
	uint64_t dev;		     /* files_lock, I6: st_dev of the backing file */
	uint64_t ino;		     /* files_lock, I6: st_ino */
	uint64_t validator;	     /* files_lock + atomic, I6: hash of size, mtime, ctime */
	uint64_t residency;	     /* atomic CAS, I4: epoch << 32 | reachable buffers */
	uint64_t wseq;		     /* atomic, I5: coherence sequence */
	uint64_t last_use;	     /* files_lock: header.tick at last get/put */
	uint32_t idgen;		     /* files_lock + atomic, I6: identity generation */
	uint32_t state;		     /* files_lock: enum pool_fslot_state */
	uint32_t opens;		     /* files_lock: handles open ("active streams") */
	uint32_t quota;		     /* files_lock: buffers reserved, POOL_QUOTA_ALL */
	uint32_t reserve;	     /* files_lock: what quota adds to header.reserved */
	uint32_t fnext;		     /* files_lock + atomic: next slot in the file hash chain */
	uint64_t c[POOL_C_FILE_MAX]; /* atomic counters */
	uint64_t wlease;	     /* atomic, I5: CLOCK_REALTIME ns until which writes are busy */
	uint64_t dirty;		     /* atomic CAS, I8: bumper pid << 32 | dirty buffers */
	char path[POOL_PATH_LEN];    /* files_lock, I6: tail of the path, NUL-terminated */
	uint32_t flags;		     /* atomic: POOL_FILE_F_* */
	uint32_t wactive;	     /* atomic, I5: writes between begin and end */
	uint64_t dsize;	   /* atomic, I8: end of deferred data (0: none), for stat in any mount */
	int64_t dmtime_ns; /* atomic, I8: time of the last deferred write */
	/* The file handle (I9): set with the identity, or by an open that finds
	 * none (or another generation) there; read only under files_lock. */
	uint32_t fh_type;	 /* files_lock: handle_type of the file handle */
	uint32_t fh_bytes;	 /* files_lock: its length, 0: none; untrusted: <= POOL_FH_MAX */
	uint8_t fh[POOL_FH_MAX]; /* files_lock: name_to_handle_at() of the file */
};

/* Descriptor flags. */
#define POOL_BUF_F_DIRTY 0x01	   /* newer than SOURCE: never evicted, written back by owner */
#define POOL_BUF_F_PREFETCHED 0x02 /* filled by read-ahead and not read since */
#define POOL_BUF_F_APPEND 0x04	   /* with DIRTY: appended at SOURCE's end, not at its offset */

enum pool_buf_state {
	POOL_BUF_FREE = 0,
	POOL_BUF_VALID = 1,
};

/*
 * "shard lock": written only under it; the fields lock-free hits load (file,
 * epoch, bucket, len, next: I2) are stored with atomic stores. "shard lock +
 * atomic": also read (or, for flags, changed) without the lock, so every
 * access is atomic (pool_buf_flags() and friends, pool_i.h).
 */
struct pool_buf {
	uint32_t seq;	 /* I1/I2: seqlock, odd while key, len or data change */
	uint32_t file;	 /* shard lock: file slot, or POOL_NONE */
	uint32_t epoch;	 /* shard lock: the file's epoch when filled */
	uint32_t next;	 /* shard lock: next buffer in the chain, or POOL_NONE */
	uint64_t bucket; /* shard lock: bucket index within the file */
	uint32_t len;	 /* shard lock: valid bytes (< bucket_size at end of file) */
	uint8_t state;	 /* shard lock: enum pool_buf_state */
	uint8_t usage;	 /* atomic: clock counter, raised by hits, lowered by the hand */
	uint8_t flags;	 /* shard lock + atomic: POOL_BUF_F_*; a hit clears PREFETCHED lock-free */
	uint8_t pad;
	/* Deferred write (I8): meaningful only with POOL_BUF_F_DIRTY. */
	uint32_t owner;	   /* shard lock + atomic: pid of the daemon that will write it back */
	uint32_t dirty_lo; /* shard lock: dirty bytes are [dirty_lo, dirty_hi) of the bucket */
	uint32_t dirty_hi;
	uint32_t pad2;
	uint64_t dirty_ns; /* shard lock + atomic: CLOCK_REALTIME when it first became dirty */
	uint64_t pad3;
};

_Static_assert(sizeof(struct pool_header) % 64 == 0, "header must be cache-line sized");
_Static_assert(sizeof(struct pool_shard) % 64 == 0, "shard must be cache-line sized");
_Static_assert(sizeof(struct pool_fslot) == 384, "file slot is 384 bytes");
_Static_assert(sizeof(struct pool_buf) == 64, "descriptor is 64 bytes");
_Static_assert(sizeof(pthread_mutex_t) <= 64, "mutex must fit its slot");

#endif
