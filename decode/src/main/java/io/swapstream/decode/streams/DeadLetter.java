package io.swapstream.decode.streams;

/** An input that could not be decoded, with why; its bytes go to the dead-letter topic unchanged. */
public record DeadLetter(byte[] bytes, String reason) {}
