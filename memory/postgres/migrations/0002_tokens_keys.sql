-- mnemo schema version 2: what instances behind a load balancer share
-- besides memory. mnemo_tokens holds the static bearer tokens of
-- serve --http (their SHA-256, never a token), so that `mnemo token` run
-- anywhere with the storage URL adds and revokes them for every instance;
-- mnemo_keys holds keys every instance must agree on (the viewer's CSRF
-- key), each created once by whichever instance needs it first.

-- A revoked token keeps its row (revoked is set) so that the list says
-- when it stopped working; it is never accepted again.
CREATE TABLE mnemo_tokens (
    id         text        PRIMARY KEY,
    hash       text        NOT NULL UNIQUE,
    user_id    text        NOT NULL,
    agent_name text        NOT NULL DEFAULT '',
    created    timestamptz NOT NULL,
    revoked    timestamptz
);

CREATE TABLE mnemo_keys (
    name    text        PRIMARY KEY,
    secret  bytea       NOT NULL,
    created timestamptz NOT NULL DEFAULT now()
);

-- Every change to mnemo_tokens is announced on mnemo_tokens_changed (the
-- token's id as payload), so that instances drop their cached list at
-- once; their cache's short lifetime covers a lost notification.
CREATE FUNCTION mnemo_notify_tokens_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('mnemo_tokens_changed', OLD.id);
    ELSE
        PERFORM pg_notify('mnemo_tokens_changed', NEW.id);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER mnemo_tokens_changed
    AFTER INSERT OR UPDATE OR DELETE ON mnemo_tokens
    FOR EACH ROW EXECUTE FUNCTION mnemo_notify_tokens_changed();
