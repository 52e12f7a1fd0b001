-- Named queries of the SQLite ledger. Each query follows a "-- name: NAME" header and runs as
-- it is written; no SQL is built at run time. The kind lists below must equal
-- records.UNIQUE_KINDS and records.LEASE_END_KINDS + task.assigned (a test checks it).
--
-- "schema" is a fresh install at the newest version; "migration_N" takes a ledger from
-- version N-1 to N (see fleetledger/ledger/migrations.py). A released migration is never edited.

-- name: schema
CREATE TABLE IF NOT EXISTS records (
    seq         INTEGER PRIMARY KEY,
    run_id      TEXT    NOT NULL,
    ts_ms       INTEGER NOT NULL,
    actor       TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    key         TEXT,
    task        TEXT,
    epoch       INTEGER,
    why         TEXT    NOT NULL,
    payload     TEXT    NOT NULL,
    policy_hash TEXT    NOT NULL,
    prev_hash   TEXT    NOT NULL,
    hash        TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS records_by_run ON records (run_id, seq);
CREATE UNIQUE INDEX IF NOT EXISTS records_unique_key ON records (run_id, key, kind)
    WHERE kind = 'run.started' OR kind = 'run.finished' OR kind = 'sprint.started'
       OR kind = 'sprint.finished' OR kind = 'task.planned'
       OR kind = 'task.finished' OR kind = 'step.done' OR kind = 'effect.intent'
       OR kind = 'effect.done' OR kind = 'model.call';
CREATE INDEX IF NOT EXISTS records_lease_events ON records (run_id, task, seq)
    WHERE kind = 'task.assigned' OR kind = 'lease.expired' OR kind = 'lease.released'
       OR kind = 'task.finished' OR kind = 'task.failed';
CREATE INDEX IF NOT EXISTS records_by_task ON records (run_id, task, kind, seq) WHERE task IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_checkpoints ON records (run_id, seq) WHERE kind = 'checkpoint';
CREATE TRIGGER IF NOT EXISTS records_no_update BEFORE UPDATE ON records
BEGIN
    SELECT RAISE(ABORT, 'fleetledger: the ledger is append-only; UPDATE refused');
END;
CREATE TRIGGER IF NOT EXISTS records_no_delete BEFORE DELETE ON records
BEGIN
    SELECT RAISE(ABORT, 'fleetledger: the ledger is append-only; DELETE refused');
END;
CREATE TABLE IF NOT EXISTS meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- name: migration_1
CREATE TABLE IF NOT EXISTS records (
    seq         INTEGER PRIMARY KEY,
    run_id      TEXT    NOT NULL,
    ts_ms       INTEGER NOT NULL,
    actor       TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    key         TEXT,
    task        TEXT,
    epoch       INTEGER,
    why         TEXT    NOT NULL,
    payload     TEXT    NOT NULL,
    policy_hash TEXT    NOT NULL,
    prev_hash   TEXT    NOT NULL,
    hash        TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS records_by_run ON records (run_id, seq);
CREATE UNIQUE INDEX IF NOT EXISTS records_unique_key ON records (run_id, key, kind)
    WHERE kind IN ('run.started', 'run.finished', 'sprint.started', 'sprint.finished',
                   'task.planned', 'task.finished', 'step.done', 'effect.intent',
                   'effect.done', 'model.call');
CREATE INDEX IF NOT EXISTS records_lease_events ON records (run_id, task, seq)
    WHERE kind IN ('task.assigned', 'lease.expired', 'lease.released', 'task.finished', 'task.failed');
CREATE TRIGGER IF NOT EXISTS records_no_update BEFORE UPDATE ON records
BEGIN
    SELECT RAISE(ABORT, 'fleetledger: the ledger is append-only; UPDATE refused');
END;
CREATE TRIGGER IF NOT EXISTS records_no_delete BEFORE DELETE ON records
BEGIN
    SELECT RAISE(ABORT, 'fleetledger: the ledger is append-only; DELETE refused');
END;
CREATE TABLE IF NOT EXISTS meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- name: migration_2
-- Reads by task (inputs, step results, a task's history) and the run's latest checkpoint, so
-- that readers fold from a checkpoint and fetch the rest on demand.
CREATE INDEX IF NOT EXISTS records_by_task ON records (run_id, task, kind, seq) WHERE task IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_checkpoints ON records (run_id, seq) WHERE kind = 'checkpoint';

-- name: migration_3
-- The kind conditions of the two partial indexes as chains of OR: SQLite evaluates a partial
-- index's "kind IN (...)" list by building a table for it at every insert, about 1.5 us of the
-- 8 us an insert took for each of the two (a third of the ledger's CPU per record); the chain
-- costs a few comparisons. The queries that use these indexes repeat the same chain.
DROP INDEX IF EXISTS records_unique_key;
DROP INDEX IF EXISTS records_lease_events;
CREATE UNIQUE INDEX IF NOT EXISTS records_unique_key ON records (run_id, key, kind)
    WHERE kind = 'run.started' OR kind = 'run.finished' OR kind = 'sprint.started'
       OR kind = 'sprint.finished' OR kind = 'task.planned'
       OR kind = 'task.finished' OR kind = 'step.done' OR kind = 'effect.intent'
       OR kind = 'effect.done' OR kind = 'model.call';
CREATE INDEX IF NOT EXISTS records_lease_events ON records (run_id, task, seq)
    WHERE kind = 'task.assigned' OR kind = 'lease.expired' OR kind = 'lease.released'
       OR kind = 'task.finished' OR kind = 'task.failed';

-- name: last_seq
SELECT coalesce(max(seq), 0) FROM records;

-- name: run_head
SELECT hash FROM records WHERE run_id = ? ORDER BY seq DESC LIMIT 1;

-- name: find_unique
SELECT seq, payload FROM records
WHERE run_id = ? AND key = ? AND kind = ?
  AND (kind = 'run.started' OR kind = 'run.finished' OR kind = 'sprint.started'
       OR kind = 'sprint.finished' OR kind = 'task.planned'
       OR kind = 'task.finished' OR kind = 'step.done' OR kind = 'effect.intent'
       OR kind = 'effect.done' OR kind = 'model.call');

-- name: lease_state
-- The task's last lease event (records_lease_events), or task.reopened at that event's epoch
-- when the task was reopened after it (records_by_task).
SELECT CASE WHEN r.seq > l.seq THEN 'task.reopened' ELSE l.kind END, l.epoch
FROM (SELECT seq, kind, epoch FROM records
      WHERE run_id = :run AND task = :task
        AND (kind = 'task.assigned' OR kind = 'lease.expired' OR kind = 'lease.released'
            OR kind = 'task.finished' OR kind = 'task.failed')
      ORDER BY seq DESC LIMIT 1) AS l
LEFT JOIN (SELECT max(seq) AS seq FROM records
           WHERE run_id = :run AND task = :task AND kind = 'task.reopened') AS r ON 1 = 1;

-- name: insert
INSERT INTO records (seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload,
                     policy_hash, prev_hash, hash)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: read_run
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records WHERE run_id = ? AND seq > ? ORDER BY seq;

-- name: run_span
-- The first and last seq and the number of a run's records after a seq: an index-only pass
-- over records_by_run, so that read() can choose how to fetch the rows.
SELECT min(seq), max(seq), count(*) FROM records WHERE run_id = ? AND seq > ?;

-- name: read_span
-- A run's records between two seqs by the table's own order (rowid), other runs' rows skipped
-- (the + keeps records_by_run out of the plan): when the run fills most of its span, this
-- reads each row once instead of an index entry and then the row.
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records WHERE seq BETWEEN ? AND ? AND +run_id = ? ORDER BY seq;

-- name: spilled_seqs
-- Records whose row may not fit on its leaf page (its text columns' bytes above a bound, for
-- the page size in use): SQLite stores the rest on overflow pages, whose content quick_check
-- does not check. Each text value is read (O(N), as quick_check reads every page anyway).
SELECT seq FROM records
WHERE length(CAST(run_id AS BLOB)) + length(CAST(actor AS BLOB)) + length(CAST(kind AS BLOB))
      + ifnull(length(CAST(key AS BLOB)), 0) + ifnull(length(CAST(task AS BLOB)), 0)
      + length(CAST(why AS BLOB)) + length(CAST(payload AS BLOB)) + length(CAST(policy_hash AS BLOB))
      + length(CAST(prev_hash AS BLOB)) + length(CAST(hash AS BLOB)) > ?
ORDER BY seq;

-- name: record_at
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records WHERE seq = ?;

-- name: read_all
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records WHERE seq > ? ORDER BY seq;

-- name: task_records
-- Every record about any task of a JSON array, in order: one range of records_by_task per
-- task. Without statistics the planner would rather walk all of the run's records through
-- records_by_run (already in seq order), hence INDEXED BY.
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records INDEXED BY records_by_task WHERE run_id = ? AND task IN (SELECT value FROM json_each(?)) ORDER BY seq;

-- name: task_records_of_kind
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records INDEXED BY records_by_task WHERE run_id = ? AND task IN (SELECT value FROM json_each(?)) AND kind = ? ORDER BY seq;

-- name: kind_records
-- Every run's records of one kind whose payload text holds a string, newest first: one pass
-- over the table, the string matched in SQLite (instr of '' is 1: every record).
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records WHERE kind = ? AND instr(payload, ?) > 0 ORDER BY seq DESC;

-- name: latest_checkpoint
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records WHERE run_id = ? AND kind = 'checkpoint' ORDER BY seq DESC LIMIT 1;

-- name: unique_record
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records
WHERE run_id = ? AND key = ? AND kind = ?
  AND (kind = 'run.started' OR kind = 'run.finished' OR kind = 'sprint.started'
       OR kind = 'sprint.finished' OR kind = 'task.planned'
       OR kind = 'task.finished' OR kind = 'step.done' OR kind = 'effect.intent'
       OR kind = 'effect.done' OR kind = 'model.call');

-- name: first_records
-- The first record of each run: the runs are found by skipping through records_by_run one
-- run at a time (a loose index scan), so this costs one lookup per run, not one per record.
WITH RECURSIVE runs (run_id) AS (
    SELECT min(run_id) FROM records
    UNION ALL
    SELECT (SELECT min(run_id) FROM records WHERE run_id > runs.run_id) FROM runs WHERE runs.run_id IS NOT NULL
)
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records
WHERE seq IN (SELECT (SELECT min(seq) FROM records AS first WHERE first.run_id = runs.run_id)
              FROM runs WHERE runs.run_id IS NOT NULL)
ORDER BY seq;

-- name: runs
SELECT run_id, min(seq), max(seq), count(*) FROM records GROUP BY run_id ORDER BY min(seq);

-- name: schema_version
SELECT value FROM meta WHERE name = 'schema_version';

-- name: has_records
SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'records';

-- name: has_meta
SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta';

-- name: set_version
INSERT INTO meta (name, value) VALUES ('schema_version', ?)
ON CONFLICT (name) DO UPDATE SET value = excluded.value;
