package io.swapstream.etw;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/** Reading a file's bytes at a place, as the readers and writers of .etl files outside {@link EtlReader} need them. */
public final class FileBytes {
    private FileBytes() {}

    /**
     * Fills {@code b} from its position to its limit with the file's bytes from {@code at + b.position()} on: a channel
     * read may return fewer bytes than asked. Throws when the file ends first.
     */
    public static void readFully(FileChannel ch, ByteBuffer b, long at) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b, at + b.position()) < 0) throw new IOException("file ends early");
        }
    }
}
