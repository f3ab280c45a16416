package io.swapstream.schemas.state;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class StateFormatTest {
    private static final StateFormat FORMAT = new StateFormat("test state", 3);

    @Test
    void everyKindOfFieldReadsBackAsWritten() {
        byte[] v = FORMAT.write(o -> o.writeByte(200).writeBoolean(true).writeInt(-7).writeLong(Long.MIN_VALUE).varLong(-1)
                .varLong(Long.MAX_VALUE).string("ready ⏱ 1 µs").nullableString(null).nullableInt(42).nullableLong(null)
                .bytes(new byte[] {1, 2, 3}));
        assertEquals(3, v[0]);
        List<Object> read = FORMAT.read(v, in -> List.of(in.readUnsignedByte(), in.readBoolean(), in.readInt(), in.readLong(),
                in.varLong(), in.varLong(), in.string(), String.valueOf(in.nullableString()), in.nullableInt(),
                String.valueOf(in.nullableLong()), in.bytes(), in.remaining()));
        assertEquals(List.of(200, true, -7, Long.MIN_VALUE, -1L, Long.MAX_VALUE, "ready ⏱ 1 µs", "null", 42, "null"), read.subList(0, 10));
        assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) read.get(10));
        assertEquals(0, read.get(11));
    }

    @Test
    void aValueOfAnotherVersionIsRefusedInOneLineSayingWhatToDo() {
        byte[] older = new StateFormat("test state", 2).write(o -> o.writeLong(1));
        var e = assertThrows(StateFormat.IncompatibleStateException.class, () -> FORMAT.read(older, StateReader::readLong));
        assertTrue(e.getMessage().startsWith("test state state is version 2, and this build reads version 3 only"), e.getMessage());
        assertTrue(e.getMessage().contains("kafka-streams-application-reset") && !e.getMessage().contains("\n"), e.getMessage());
    }

    @Test
    void aValueCutShortSaysWhere() {
        byte[] v = FORMAT.write(o -> o.writeLong(1));
        byte[] cut = java.util.Arrays.copyOf(v, 5);
        var e = assertThrows(IllegalStateException.class, () -> FORMAT.read(cut, StateReader::readLong));
        assertTrue(e.getMessage().contains("ends at byte"), e.getMessage());
        assertNull(FORMAT.read(FORMAT.write(o -> o.nullableString(null)), StateReader::nullableString));
    }
}
