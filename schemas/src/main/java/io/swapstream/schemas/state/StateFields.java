package io.swapstream.schemas.state;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.ObjIntConsumer;
import java.util.function.ObjLongConsumer;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;
import java.util.function.ToLongFunction;

/**
 * A state value's fields in the order they are written, each named once with how it is got and set: the
 * writing and the reading cannot fall out of step. A field added in a later release goes last
 * ({@link #lastIfPresent}), as {@link StateFormat} requires.
 */
public final class StateFields<T> {
    private interface Field<T> {
        void write(T value, StateWriter out);

        void read(T value, StateReader in);
    }

    private final List<Field<T>> fields = new ArrayList<>();

    public StateFields<T> longField(ToLongFunction<T> get, ObjLongConsumer<T> set) {
        return add(new Field<>() {
            public void write(T v, StateWriter o) { o.writeLong(get.applyAsLong(v)); }
            public void read(T v, StateReader in) { set.accept(v, in.readLong()); }
        });
    }

    public StateFields<T> intField(ToIntFunction<T> get, ObjIntConsumer<T> set) {
        return add(new Field<>() {
            public void write(T v, StateWriter o) { o.writeInt(get.applyAsInt(v)); }
            public void read(T v, StateReader in) { set.accept(v, in.readInt()); }
        });
    }

    public StateFields<T> booleanField(Predicate<T> get, BiConsumer<T, Boolean> set) {
        return add(new Field<>() {
            public void write(T v, StateWriter o) { o.writeBoolean(get.test(v)); }
            public void read(T v, StateReader in) { set.accept(v, in.readBoolean()); }
        });
    }

    public StateFields<T> nullableInt(Function<T, Integer> get, BiConsumer<T, Integer> set) {
        return add(new Field<>() {
            public void write(T v, StateWriter o) { o.nullableInt(get.apply(v)); }
            public void read(T v, StateReader in) { set.accept(v, in.nullableInt()); }
        });
    }

    public StateFields<T> nullableString(Function<T, String> get, BiConsumer<T, String> set) {
        return add(new Field<>() {
            public void write(T v, StateWriter o) { o.nullableString(get.apply(v)); }
            public void read(T v, StateReader in) { set.accept(v, in.nullableString()); }
        });
    }

    public StateFields<T> bytes(Function<T, byte[]> get, BiConsumer<T, byte[]> set) {
        return add(new Field<>() {
            public void write(T v, StateWriter o) { o.bytes(get.apply(v)); }
            public void read(T v, StateReader in) { set.accept(v, in.bytes()); }
        });
    }

    /** A list of strings, each cut to {@code maxChars}; read into the list {@code get} gives. */
    public StateFields<T> strings(Function<T, List<String>> get, int maxChars) {
        return add(new Field<>() {
            public void write(T v, StateWriter o) {
                List<String> l = get.apply(v);
                o.writeInt(l.size());
                for (String s : l) o.string(s.length() > maxChars ? s.substring(0, maxChars) : s);
            }

            public void read(T v, StateReader in) {
                List<String> l = get.apply(v);
                for (int n = in.readInt(); n > 0; n--) l.add(in.string());
            }
        });
    }

    /** A string written after every field of an earlier release's value, which has none: null then. */
    public StateFields<T> lastIfPresent(Function<T, String> get, BiConsumer<T, String> set) {
        return add(new Field<>() {
            public void write(T v, StateWriter o) { o.nullableString(get.apply(v)); }
            public void read(T v, StateReader in) { set.accept(v, in.remaining() > 0 ? in.nullableString() : null); }
        });
    }

    private StateFields<T> add(Field<T> f) {
        fields.add(f);
        return this;
    }

    /** Writes every field of {@code value}. */
    public void write(T value, StateWriter out) {
        for (Field<T> f : fields) f.write(value, out);
    }

    /** Reads every field into {@code value}, and returns it. */
    public T read(T value, StateReader in) {
        for (Field<T> f : fields) f.read(value, in);
        return value;
    }
}
