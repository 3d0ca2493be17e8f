package dev.readygate.e2e;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Writes a small random-weight LLaMA-architecture model as a GGUF file (version 3, all tensors F32) that llama.cpp's
 * {@code llama-server} loads: the {@code llama.*} hyper-parameters, the {@code tokenizer.*} keys copied from the
 * vocabulary-only GGUF in {@code src/test/resources/llama/} (LLaMA's 32000-token SentencePiece tokenizer), and the
 * tensors llama.cpp's LLaMA loader wants. The weights are a deterministic function of the seed: another seed at the same
 * path is another model (different canary answers) with the same shape and tokenizer.
 *
 * @param embedding {@code llama.embedding_length}
 * @param layers {@code llama.block_count}
 * @param heads {@code llama.attention.head_count} (and {@code head_count_kv})
 * @param feedForward {@code llama.feed_forward_length}
 * @param contextLength {@code llama.context_length}, the training context (llama-server's default {@code -c})
 * @param seed the weights' seed
 */
public record GgufModel(int embedding, int layers, int heads, int feedForward, int contextLength, long seed) {

    private static final int MAGIC = 0x46554747; // "GGUF", little-endian
    private static final int VERSION = 3;
    private static final int ALIGNMENT = 32;
    private static final int TYPE_UINT32 = 4;
    private static final int TYPE_INT32 = 5;
    private static final int TYPE_FLOAT32 = 6;
    private static final int TYPE_BOOL = 7;
    private static final int TYPE_STRING = 8;
    private static final int TYPE_ARRAY = 9;
    private static final int GGML_TYPE_F32 = 0;
    private static final String VOCABULARY = "/llama/ggml-vocab-llama-spm.gguf";
    private static final int VOCABULARY_SIZE = 32000;

    public GgufModel {
        if (embedding % heads != 0) {
            throw new IllegalArgumentException("embedding must be a multiple of heads");
        }
    }

    /** The small model: loads in well under a second. */
    public static GgufModel small(long seed) {
        return new GgufModel(64, 2, 4, 128, 2048, seed);
    }

    /**
     * A larger model (about 800 MB), for a loading phase llama-server answers 503 "Loading model" through: read with
     * {@code --no-mmap}, its weights are copied into memory before the server serves.
     */
    static GgufModel large(long seed) {
        return new GgufModel(1024, 12, 16, 2816, 2048, seed);
    }

    /** Writes the model to {@code file}, atomically (a server reading the path never sees half a file). */
    public Path writeTo(Path file) {
        Path partial = file.resolveSibling(file.getFileName() + ".partial");
        try (FileChannel out = FileChannel.open(
                partial, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            return Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void write(FileChannel out) throws IOException {
        List<Tensor> tensors = tensors();
        Map<String, byte[]> tokenizer = tokenizerKeys();
        Buffer header = new Buffer();
        header.int32(MAGIC).int32(VERSION).int64(tensors.size()).int64(11 + tokenizer.size());
        header.string("general.architecture").int32(TYPE_STRING).string("llama");
        header.string("general.name").int32(TYPE_STRING).string("readygate-test-" + seed);
        header.string("general.file_type").int32(TYPE_UINT32).int32(0);
        uint32(header, "llama.context_length", contextLength);
        uint32(header, "llama.embedding_length", embedding);
        uint32(header, "llama.block_count", layers);
        uint32(header, "llama.feed_forward_length", feedForward);
        uint32(header, "llama.attention.head_count", heads);
        uint32(header, "llama.attention.head_count_kv", heads);
        uint32(header, "llama.rope.dimension_count", embedding / heads);
        header.string("llama.attention.layer_norm_rms_epsilon")
                .int32(TYPE_FLOAT32)
                .float32(1e-5f);
        tokenizer.forEach((key, value) -> header.string(key).raw(value));
        long offset = 0;
        for (Tensor tensor : tensors) {
            header.string(tensor.name()).int32(tensor.dims().length);
            for (long dim : tensor.dims()) {
                header.int64(dim);
            }
            header.int32(GGML_TYPE_F32).int64(offset);
            offset = align(offset + tensor.bytes());
        }
        header.pad();
        out.write(header.bytes());
        SplittableRandom random = new SplittableRandom(seed);
        for (Tensor tensor : tensors) {
            writeTensor(out, tensor, random.split());
        }
    }

    private static void uint32(Buffer buffer, String key, int value) {
        buffer.string(key).int32(TYPE_UINT32).int32(value);
    }

    /** The tensors llama.cpp's LLaMA loader requires, in the order it lists them. Dimensions are ggml's (ne[0] first). */
    private List<Tensor> tensors() {
        List<Tensor> tensors = new ArrayList<>();
        tensors.add(new Tensor("token_embd.weight", false, embedding, VOCABULARY_SIZE));
        tensors.add(new Tensor("output_norm.weight", true, embedding));
        tensors.add(new Tensor("output.weight", false, embedding, VOCABULARY_SIZE));
        for (int i = 0; i < layers; i++) {
            String block = "blk." + i + ".";
            tensors.add(new Tensor(block + "attn_norm.weight", true, embedding));
            tensors.add(new Tensor(block + "attn_q.weight", false, embedding, embedding));
            tensors.add(new Tensor(block + "attn_k.weight", false, embedding, embedding));
            tensors.add(new Tensor(block + "attn_v.weight", false, embedding, embedding));
            tensors.add(new Tensor(block + "attn_output.weight", false, embedding, embedding));
            tensors.add(new Tensor(block + "ffn_norm.weight", true, embedding));
            tensors.add(new Tensor(block + "ffn_gate.weight", false, embedding, feedForward));
            tensors.add(new Tensor(block + "ffn_down.weight", false, feedForward, embedding));
            tensors.add(new Tensor(block + "ffn_up.weight", false, embedding, feedForward));
        }
        return tensors;
    }

    /** A norm is all ones; a matrix is uniform in +-(1/sqrt(fan-in)), so activations keep their scale. */
    private static void writeTensor(FileChannel out, Tensor tensor, SplittableRandom random) throws IOException {
        ByteBuffer chunk = ByteBuffer.allocate(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
        double scale = tensor.norm() ? 0 : 1.0 / Math.sqrt(tensor.dims()[0]);
        long floats = tensor.bytes() / Float.BYTES;
        for (long i = 0; i < floats; i++) {
            chunk.putFloat(tensor.norm() ? 1f : (float) ((random.nextDouble() * 2 - 1) * scale * 1.7));
            if (!chunk.hasRemaining()) {
                chunk.flip();
                writeFully(out, chunk);
                chunk.clear();
            }
        }
        long padding = align(tensor.bytes()) - tensor.bytes();
        for (long i = 0; i < padding; i++) {
            chunk.put((byte) 0);
        }
        chunk.flip();
        writeFully(out, chunk);
    }

    private static void writeFully(FileChannel out, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            out.write(buffer);
        }
    }

    private static long align(long offset) {
        return (offset + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    }

    private record Tensor(String name, boolean norm, long... dims) {
        long bytes() {
            long count = 1;
            for (long dim : dims) {
                count *= dim;
            }
            return count * Float.BYTES;
        }
    }

    /** The vocabulary file's {@code tokenizer.*} key-value pairs, each as its raw value bytes (type tag first). */
    private static Map<String, byte[]> tokenizerKeys() throws IOException {
        byte[] file;
        try (InputStream in = GgufModel.class.getResourceAsStream(VOCABULARY)) {
            if (in == null) {
                throw new IllegalStateException("no " + VOCABULARY + " on the test class path");
            }
            file = in.readAllBytes();
        }
        ByteBuffer buffer = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        if (buffer.getInt() != MAGIC || buffer.getInt() != VERSION) {
            throw new IllegalStateException(VOCABULARY + " is not a GGUF version 3 file");
        }
        buffer.getLong(); // tensors: none
        long count = buffer.getLong();
        Map<String, byte[]> keys = new LinkedHashMap<>();
        for (long i = 0; i < count; i++) {
            String key = readString(buffer);
            int start = buffer.position();
            skipValue(buffer, buffer.getInt());
            if (key.startsWith("tokenizer.")) {
                byte[] value = new byte[buffer.position() - start];
                buffer.get(start, value);
                keys.put(key, value);
            }
        }
        return keys;
    }

    private static String readString(ByteBuffer buffer) {
        byte[] bytes = new byte[Math.toIntExact(buffer.getLong())];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static void skipValue(ByteBuffer buffer, int type) {
        switch (type) {
            case 0, 1, TYPE_BOOL -> buffer.position(buffer.position() + 1);
            case 2, 3 -> buffer.position(buffer.position() + 2);
            case TYPE_UINT32, TYPE_INT32, TYPE_FLOAT32 -> buffer.position(buffer.position() + 4);
            case 10, 11, 12 -> buffer.position(buffer.position() + 8);
            case TYPE_STRING -> {
                long length = buffer.getLong();
                buffer.position(Math.toIntExact(buffer.position() + length));
            }
            case TYPE_ARRAY -> {
                int elementType = buffer.getInt();
                long elements = buffer.getLong();
                for (long i = 0; i < elements; i++) {
                    skipValue(buffer, elementType);
                }
            }
            default -> throw new IllegalStateException("unknown GGUF value type " + type);
        }
    }

    /** A growing little-endian buffer for the header. */
    private static final class Buffer {
        private ByteBuffer bytes = ByteBuffer.allocate(1 << 20).order(ByteOrder.LITTLE_ENDIAN);

        Buffer int32(int value) {
            room(4).putInt(value);
            return this;
        }

        Buffer int64(long value) {
            room(8).putLong(value);
            return this;
        }

        Buffer float32(float value) {
            room(4).putFloat(value);
            return this;
        }

        Buffer string(String value) {
            byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
            int64(utf8.length);
            room(utf8.length).put(utf8);
            return this;
        }

        Buffer raw(byte[] value) {
            room(value.length).put(value);
            return this;
        }

        void pad() {
            while (bytes.position() % ALIGNMENT != 0) {
                room(1).put((byte) 0);
            }
        }

        ByteBuffer bytes() {
            return bytes.duplicate().flip();
        }

        private ByteBuffer room(int needed) {
            if (bytes.remaining() < needed) {
                ByteBuffer bigger = ByteBuffer.allocate(Math.max(bytes.capacity() * 2, bytes.position() + needed))
                        .order(ByteOrder.LITTLE_ENDIAN);
                bytes.flip();
                bigger.put(bytes);
                bytes = bigger;
            }
            return bytes;
        }
    }
}
