-- mnemo schema version 3: the idempotency key of a turn, in a column, so
-- that an append that carries one can look for it inside its own
-- transaction, under the scope's row lock: a retry of an exchange whose
-- commit was never acknowledged (the connection broke) is then stored
-- once, whichever instance it reaches. NULL for turns without a key and
-- for turns of schema version 1.
ALTER TABLE mnemo_turns ADD COLUMN idempotency_key text;

CREATE INDEX mnemo_turns_idempotency ON mnemo_turns (scope_id, thread_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
