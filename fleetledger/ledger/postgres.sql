-- Named queries of the PostgreSQL ledger. Each query follows a "-- name: NAME" header and runs as
-- it is written (psycopg's %s placeholders); no SQL is built at run time. Every name is
-- unqualified: the ledger lives in the first schema of the connection's search_path. The kind
-- lists below must equal records.UNIQUE_KINDS and records.LEASE_END_KINDS + task.assigned (a
-- test checks it).
--
-- "schema" is a fresh install at the newest version; "migration_N" takes a ledger from
-- version N-1 to N (see fleetledger/ledger/migrations.py). A released migration is never edited.

-- name: schema
CREATE TABLE records (
    seq         bigint PRIMARY KEY,
    run_id      text   NOT NULL,
    ts_ms       bigint NOT NULL,
    actor       text   NOT NULL,
    kind        text   NOT NULL,
    key         text,
    task        text,
    epoch       bigint,
    why         text   NOT NULL,
    payload     text   NOT NULL,
    policy_hash text   NOT NULL,
    prev_hash   text   NOT NULL,
    hash        text   NOT NULL
);
CREATE INDEX records_by_run ON records (run_id, seq);
CREATE UNIQUE INDEX records_unique_key ON records (run_id, key, kind)
    WHERE kind IN ('run.started', 'run.finished', 'sprint.started', 'sprint.finished',
                   'task.planned', 'task.finished', 'step.done', 'effect.intent',
                   'effect.done', 'model.call');
CREATE INDEX records_lease_events ON records (run_id, task, seq)
    WHERE kind IN ('task.assigned', 'lease.expired', 'lease.released', 'task.finished', 'task.failed');
CREATE INDEX records_by_task ON records (run_id, task, kind, seq) WHERE task IS NOT NULL;
CREATE INDEX records_checkpoints ON records (run_id, seq) WHERE kind = 'checkpoint';
CREATE FUNCTION records_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'fleetledger: the ledger is append-only; % refused', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER records_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON records
    FOR EACH STATEMENT EXECUTE FUNCTION records_append_only();
CREATE TABLE meta (
    name  text PRIMARY KEY,
    value text NOT NULL
);

-- name: migration_1
CREATE TABLE records (
    seq         bigint PRIMARY KEY,
    run_id      text   NOT NULL,
    ts_ms       bigint NOT NULL,
    actor       text   NOT NULL,
    kind        text   NOT NULL,
    key         text,
    task        text,
    epoch       bigint,
    why         text   NOT NULL,
    payload     text   NOT NULL,
    policy_hash text   NOT NULL,
    prev_hash   text   NOT NULL,
    hash        text   NOT NULL
);
CREATE INDEX records_by_run ON records (run_id, seq);
CREATE UNIQUE INDEX records_unique_key ON records (run_id, key, kind)
    WHERE kind IN ('run.started', 'run.finished', 'sprint.started', 'sprint.finished',
                   'task.planned', 'task.finished', 'step.done', 'effect.intent',
                   'effect.done', 'model.call');
CREATE INDEX records_lease_events ON records (run_id, task, seq)
    WHERE kind IN ('task.assigned', 'lease.expired', 'lease.released', 'task.finished', 'task.failed');
CREATE FUNCTION records_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'fleetledger: the ledger is append-only; % refused', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER records_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON records
    FOR EACH STATEMENT EXECUTE FUNCTION records_append_only();
CREATE TABLE meta (
    name  text PRIMARY KEY,
    value text NOT NULL
);

-- name: migration_2
-- Reads by task (inputs, step results, a task's history) and the run's latest checkpoint, so
-- that readers fold from a checkpoint and fetch the rest on demand.
CREATE INDEX records_by_task ON records (run_id, task, kind, seq) WHERE task IS NOT NULL;
CREATE INDEX records_checkpoints ON records (run_id, seq) WHERE kind = 'checkpoint';

-- name: session
-- Durable commits whatever the server's default, and a bound on waiting for the ledger lock.
SELECT set_config('synchronous_commit', 'on', false), set_config('lock_timeout', %s, false);

-- name: lock
-- Serialises every write transaction on this ledger (appends, install, upgrade) across all
-- connections and hosts, until the transaction ends. Released after the commit is visible.
SELECT pg_advisory_xact_lock(hashtextextended('fleetledger ledger ' || current_schema(), 0));

-- name: has_meta
SELECT EXISTS (SELECT FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = 'meta');

-- name: schema_version
SELECT value FROM meta WHERE name = 'schema_version';

-- name: set_version
INSERT INTO meta (name, value) VALUES ('schema_version', %s)
ON CONFLICT (name) DO UPDATE SET value = excluded.value;

-- name: tail
-- Run after "lock", in its own statement, so that its snapshot sees every earlier commit.
-- The ledger's last record (none when it is empty) is also the last record of its run.
SELECT m.value, r.seq, r.run_id, r.hash
FROM meta m LEFT JOIN LATERAL (SELECT seq, run_id, hash FROM records ORDER BY seq DESC LIMIT 1) r ON true
WHERE m.name = 'schema_version';

-- name: run_head
SELECT hash FROM records WHERE run_id = %s ORDER BY seq DESC LIMIT 1;

-- name: find_unique
SELECT seq, payload FROM records
WHERE run_id = %s AND key = %s AND kind = %s
  AND kind IN ('run.started', 'run.finished', 'sprint.started', 'sprint.finished',
               'task.planned', 'task.finished', 'step.done', 'effect.intent',
               'effect.done', 'model.call');

-- name: lease_state
-- The task's last lease event (records_lease_events), or task.reopened at that event's epoch
-- when the task was reopened after it (records_by_task).
SELECT CASE WHEN r.seq > l.seq THEN 'task.reopened' ELSE l.kind END, l.epoch
FROM (SELECT seq, kind, epoch FROM records
      WHERE run_id = %(run)s AND task = %(task)s
        AND kind IN ('task.assigned', 'lease.expired', 'lease.released', 'task.finished', 'task.failed')
      ORDER BY seq DESC LIMIT 1) AS l
LEFT JOIN (SELECT max(seq) AS seq FROM records
           WHERE run_id = %(run)s AND task = %(task)s AND kind = 'task.reopened') AS r ON 1 = 1;

-- name: insert
-- A record whose (run, key, kind) is already stored under a unique kind inserts nothing.
INSERT INTO records (seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload,
                     policy_hash, prev_hash, hash)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (run_id, key, kind)
    WHERE kind IN ('run.started', 'run.finished', 'sprint.started', 'sprint.finished',
                   'task.planned', 'task.finished', 'step.done', 'effect.intent',
                   'effect.done', 'model.call')
DO NOTHING;

-- name: read_run
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records WHERE run_id = %s AND seq > %s ORDER BY seq LIMIT %s;

-- name: read_all
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records WHERE seq > %s ORDER BY seq LIMIT %s;

-- name: task_records
-- Every record about any task of an array, in order: one range of records_by_task per task.
-- Not paged with ORDER BY seq LIMIT, which would tempt the planner to walk the whole run
-- through records_by_run, already in seq order, hoping to meet the tasks early.
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records WHERE run_id = %s AND task = ANY(%s) ORDER BY seq;

-- name: task_records_of_kind
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records WHERE run_id = %s AND task = ANY(%s) AND kind = %s ORDER BY seq;

-- name: kind_records
-- Every run's records of one kind whose payload text holds a string, newest first (strpos of
-- '' is 1: every record).
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records WHERE kind = %s AND strpos(payload, %s) > 0 ORDER BY seq DESC;

-- name: latest_checkpoint
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records WHERE run_id = %s AND kind = 'checkpoint' ORDER BY seq DESC LIMIT 1;

-- name: unique_record
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash,
       prev_hash, hash
FROM records
WHERE run_id = %s AND key = %s AND kind = %s
  AND kind IN ('run.started', 'run.finished', 'sprint.started', 'sprint.finished',
               'task.planned', 'task.finished', 'step.done', 'effect.intent',
               'effect.done', 'model.call');

-- name: first_records
-- The first record of each run, found by skipping through records_by_run from one run to the
-- next (a loose index scan: one lookup per run, not one per record). Each step orders by
-- (run_id, seq) over a range of run_id, an order only records_by_run gives.
WITH RECURSIVE firsts AS (
    (SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash, prev_hash, hash
     FROM records ORDER BY run_id, seq LIMIT 1)
    UNION ALL
    SELECT next.* FROM firsts CROSS JOIN LATERAL (
        SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash, prev_hash, hash
        FROM records WHERE records.run_id > firsts.run_id ORDER BY records.run_id, records.seq LIMIT 1
    ) AS next
)
SELECT seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash, prev_hash, hash
FROM firsts ORDER BY seq;

-- name: runs
SELECT run_id, min(seq), max(seq), count(*) FROM records GROUP BY run_id ORDER BY min(seq);
