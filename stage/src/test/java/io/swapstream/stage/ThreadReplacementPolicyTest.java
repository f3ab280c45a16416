package io.swapstream.stage;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.streams.errors.StreamsException;
import org.junit.jupiter.api.Test;

class ThreadReplacementPolicyTest {
    static StreamsException wrapped(Throwable cause) {
        return new StreamsException("Error encountered trying to commit a transaction", cause);
    }

    @Test
    void kafkasOwnErrorsReplaceTheThreadAFewTimes() {
        ThreadReplacementPolicy p = new ThreadReplacementPolicy();
        StreamsException e = wrapped(new InvalidTxnStateException("The producer attempted a transactional operation in an invalid state."));
        for (int i = 0; i < ThreadReplacementPolicy.MAX_REPLACEMENTS; i++) assertTrue(p.replace(e, 1_000 + i));
        assertFalse(p.replace(e, 2_000), "a failure that keeps coming stops the stage");
        assertTrue(p.replace(e, 2_000 + ThreadReplacementPolicy.WINDOW_MS), "once the earlier ones are old, again");
    }

    @Test
    void oursCredentialsAndBadRecordsStopTheStage() {
        ThreadReplacementPolicy p = new ThreadReplacementPolicy();
        assertFalse(p.replace(wrapped(new IllegalStateException("buffer 0 of session s is missing from the redo store")), 0));
        assertFalse(p.replace(wrapped(new SaslAuthenticationException("bad password")), 0));
        assertFalse(p.replace(wrapped(new SerializationException("not a batch")), 0));
    }
}
