package dev.readygate.simulator;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A deterministic, invertible tokenizer: words of a fixed vocabulary (with and without a leading space) are one
 * token each, anything else falls back to one token per UTF-8 byte, as byte-level BPE tokenizers do. The same
 * text always gives the same ids, and {@link #decode} gives the text back.
 */
public final class SimulatedTokenizer {

    public static final int EOS = 0;
    public static final int IM_START = 1;
    public static final int IM_END = 2;
    private static final int BYTE_BASE = 3;
    private static final int VOCAB_BASE = BYTE_BASE + 256;
    private static final String[] SPECIALS = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
    private static final Pattern SPECIAL = Pattern.compile("<\\|(endoftext|im_start|im_end)\\|>");
    private static final Pattern PIECE = Pattern.compile(" ?[A-Za-z]+| ?[0-9]| ?[^\\sA-Za-z0-9]|\\s");

    private static final String ENGLISH = """
            the of and to in is was for on that with as by at from it an be are this which or its has had
            not but were have been their they one all also more than can other into its new first after who
            time year years two may would about up out only over most some such when there these many so
            what where how why we you he she his her our your my me them us will just like very well
            capital city country river mountain language people world history music science water light
            France Paris Germany Berlin Italy Rome Spain Madrid Japan Tokyo China Beijing England London
            The A In It This He She We They What When Where How Why Who Once Today
            model engine server request token tokens prompt answer question story day night morning evening
            long short small large good great old young high low early late right left next last same
            make made take took give gave find found know known see seen come came go went say said
            write wrote read tell told think thought work works worked use used call called
            red green blue white black golden silver quiet loud bright dark warm cold soft hard
            house garden road bridge tower market station harbor forest valley island ocean sky sun moon star
            """;

    private static final SimulatedTokenizer INSTANCE = new SimulatedTokenizer();

    private final List<String> vocabulary = new ArrayList<>();
    private final Map<String, Integer> ids = new HashMap<>();
    private final int outputVocabularyStart;

    private SimulatedTokenizer() {
        for (String word : ENGLISH.strip().split("\\s+")) {
            add(word);
            add(" " + word);
        }
        for (char c : ".,!?:;'\"-()/".toCharArray()) {
            add(String.valueOf(c));
            add(" " + c);
        }
        for (char d = '0'; d <= '9'; d++) {
            add(String.valueOf(d));
            add(" " + d);
        }
        add(" ");
        add("\n");
        this.outputVocabularyStart = vocabulary.size();
        String consonants = "bdfgklmnprstvz";
        String vowels = "aeiou";
        for (char c1 : consonants.toCharArray()) {
            for (char v1 : vowels.toCharArray()) {
                for (char c2 : consonants.toCharArray()) {
                    for (char v2 : vowels.toCharArray()) {
                        add(" " + c1 + v1 + c2 + v2);
                    }
                }
            }
        }
    }

    public static SimulatedTokenizer instance() {
        return INSTANCE;
    }

    private void add(String piece) {
        if (!ids.containsKey(piece)) {
            ids.put(piece, VOCAB_BASE + vocabulary.size());
            vocabulary.add(piece);
        }
    }

    /** Encodes text; special tokens such as {@code <|im_start|>} are recognised only when {@code special}. */
    public List<Integer> encode(String text, boolean special) {
        List<Integer> out = new ArrayList<>();
        if (!special) {
            encodePlain(text, out);
            return out;
        }
        Matcher matcher = SPECIAL.matcher(text);
        int from = 0;
        while (matcher.find()) {
            encodePlain(text.substring(from, matcher.start()), out);
            out.add(
                    switch (matcher.group(1)) {
                        case "endoftext" -> EOS;
                        case "im_start" -> IM_START;
                        default -> IM_END;
                    });
            from = matcher.end();
        }
        encodePlain(text.substring(from), out);
        return out;
    }

    private void encodePlain(String text, List<Integer> out) {
        Matcher matcher = PIECE.matcher(text);
        int from = 0;
        while (matcher.find()) {
            // Pieces the pattern skips (none today) would still be encoded byte by byte.
            encodeBytes(text.substring(from, matcher.start()), out);
            Integer id = ids.get(matcher.group());
            if (id != null) {
                out.add(id);
            } else {
                encodeBytes(matcher.group(), out);
            }
            from = matcher.end();
        }
        encodeBytes(text.substring(from), out);
    }

    private static void encodeBytes(String text, List<Integer> out) {
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            out.add(BYTE_BASE + (b & 0xff));
        }
    }

    /** Decodes ids to text; special tokens are skipped unless {@code special}. */
    public String decode(List<Integer> tokenIds, boolean special) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int id : tokenIds) {
            byte[] piece = pieceBytes(id, special);
            bytes.writeBytes(piece);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    private byte[] pieceBytes(int id, boolean special) {
        if (id < BYTE_BASE) {
            return special ? SPECIALS[id].getBytes(StandardCharsets.UTF_8) : new byte[0];
        }
        if (id < VOCAB_BASE) {
            return new byte[] {(byte) (id - BYTE_BASE)};
        }
        return vocabulary.get(id - VOCAB_BASE).getBytes(StandardCharsets.UTF_8);
    }

    /** The text of one token, as {@code logprobs.tokens} shows it. */
    public String tokenText(int id) {
        return new String(pieceBytes(id, true), StandardCharsets.UTF_8);
    }

    public boolean isValid(int id) {
        return id >= 0 && id < size();
    }

    public int size() {
        return VOCAB_BASE + vocabulary.size();
    }

    /** The ids the model draws its output from: whole words with a leading space. */
    int outputToken(long index) {
        int outputSize = vocabulary.size() - outputVocabularyStart;
        return VOCAB_BASE + outputVocabularyStart + (int) Math.floorMod(index, (long) outputSize);
    }
}
