-- mnemo schema version 1: scopes, turn logs, memory documents and their
-- kept versions, and the per-scope caches (mid-term sessions, page index
-- snapshot, page vectors). Applied by postgres.Open under an advisory lock.

-- One row per scope that ever held data. id is never reused, so a scope
-- deleted and written again is a new row. last_seq is the Seq of the
-- newest turn in the log (0 when empty): appends bump it in the statement
-- that inserts the turns, which makes the row lock the scope lock.
-- document is the memory.Document as JSON (NULL until one is saved) and
-- revision its Revision.
CREATE TABLE mnemo_scopes (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    text   NOT NULL,
    agent_name text   NOT NULL DEFAULT '',
    last_seq   bigint NOT NULL DEFAULT 0,
    revision   bigint NOT NULL DEFAULT 0,
    document   bytea,
    UNIQUE (user_id, agent_name)
);

-- The turn log. body is the memory.Turn as JSON without its Seq (seq is
-- the column): JSON keeps nanosecond times, offsets and any string exactly.
CREATE TABLE mnemo_turns (
    scope_id  bigint NOT NULL REFERENCES mnemo_scopes (id) ON DELETE CASCADE,
    seq       bigint NOT NULL,
    turn_id   text   NOT NULL,
    thread_id text   NOT NULL,
    body      bytea  NOT NULL,
    PRIMARY KEY (scope_id, seq)
);

-- Earlier memory documents kept for undo (the newest N per scope).
CREATE TABLE mnemo_versions (
    scope_id bigint NOT NULL REFERENCES mnemo_scopes (id) ON DELETE CASCADE,
    revision bigint NOT NULL,
    document bytea  NOT NULL,
    PRIMARY KEY (scope_id, revision)
);

-- Caches of what the turn log implies; removed with any turn.
CREATE TABLE mnemo_midterm (
    scope_id bigint PRIMARY KEY REFERENCES mnemo_scopes (id) ON DELETE CASCADE,
    state    bytea  NOT NULL
);

CREATE TABLE mnemo_page_index (
    scope_id bigint PRIMARY KEY REFERENCES mnemo_scopes (id) ON DELETE CASCADE,
    snapshot bytea  NOT NULL
);

-- Page vectors: little-endian float32s, under one embedding model per scope.
CREATE TABLE mnemo_vectors (
    scope_id bigint NOT NULL REFERENCES mnemo_scopes (id) ON DELETE CASCADE,
    turn_id  text   NOT NULL,
    model    text   NOT NULL,
    vector   bytea  NOT NULL,
    PRIMARY KEY (scope_id, turn_id)
);

-- Every change to a scope's log or document is announced on the channel
-- mnemo_scope_changed, payload "<user_id>" or "<user_id>/<agent_name>"
-- (memory.Scope.Key). Delivered at commit; the revision check stays the
-- source of truth.
CREATE FUNCTION mnemo_notify_scope_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    r mnemo_scopes;
BEGIN
    IF TG_OP = 'DELETE' THEN
        r := OLD;
    ELSE
        r := NEW;
    END IF;
    PERFORM pg_notify('mnemo_scope_changed',
        CASE WHEN r.agent_name = '' THEN r.user_id ELSE r.user_id || '/' || r.agent_name END);
    RETURN NULL;
END
$$;

CREATE TRIGGER mnemo_scope_written
    AFTER INSERT OR DELETE ON mnemo_scopes
    FOR EACH ROW EXECUTE FUNCTION mnemo_notify_scope_changed();

CREATE TRIGGER mnemo_scope_changed
    AFTER UPDATE ON mnemo_scopes
    FOR EACH ROW
    WHEN (OLD.last_seq IS DISTINCT FROM NEW.last_seq OR OLD.revision IS DISTINCT FROM NEW.revision)
    EXECUTE FUNCTION mnemo_notify_scope_changed();
