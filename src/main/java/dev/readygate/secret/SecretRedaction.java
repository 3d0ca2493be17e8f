package dev.readygate.secret;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * readygate's one redaction policy: what counts as a secret, and how text is shown without it. Everything readygate
 * shows, logs or stores that may carry a secret goes through here: {@code /status} and its page, the restart history
 * and its exports, log output (through the logging converters) and error messages.
 *
 * <p><b>Secret names.</b> A name is split into words (at {@code - _ .}, spaces and camelCase boundaries) and is a
 * secret when its last word is a secret noun ({@code token}, {@code key}, {@code secret}, {@code password},
 * {@code credential}, {@code authorization}, ...: {@code hf_token}, {@code api_key}, {@code --api-key},
 * {@code HF_TOKEN}, {@code clientSecret}), or when it holds {@code secret}, {@code password} or {@code credential}
 * anywhere and does not end in a word that names where a secret is rather than the secret
 * ({@code password_file}, {@code secret_name}). By the same semantics {@code max_tokens}, {@code prompt_tokens},
 * {@code --max-num-batched-tokens} (plural: counts), {@code tokenizer}, {@code token_ids}, {@code api_key_file},
 * {@code ssl_keyfile} and a tokenizer's {@code bos_token} are not secrets.
 *
 * <p><b>Text.</b> {@link #redact(String)} replaces, wherever they appear in a text, the user information of a URL
 * ({@code http://admin:pw@host} becomes {@code http://<redacted>@host}) and the value of every secret-named entry: a
 * Python or JSON mapping entry ({@code 'hf_token': 'hf_x'}, {@code "api_key": ["k"]}), a keyword argument or
 * assignment ({@code Namespace(api_key='k')}, {@code HF_TOKEN=hf_x}, a query string's {@code ?token=t}), a header
 * ({@code Authorization: Bearer t}) and a command-line option ({@code --hf-token t}, {@code --api-key=k},
 * {@code ['--api-key', 'k']}). A value is read as a literal (a quoted string, a bracketed list, tuple or dict, or a
 * bare word); an unterminated one is redacted to the end of the text. A value that hides nothing ({@code None},
 * {@code null}, booleans, empty) is kept.
 *
 * <p><b>Shapes.</b> A name is not always there: an engine's exception text says {@code 401 Client Error: token
 * hf_...}. So well-known secret shapes are redacted by their value too, wherever they stand: Hugging Face tokens
 * ({@code hf_} and at least 8 letters or digits), OpenAI-style keys ({@code sk-}, {@code sk-proj-...}, at least 8
 * more), the credential after {@code Bearer}, JWTs (three base64url parts joined by dots, the first starting
 * {@code eyJ}) and AWS access key ids ({@code AKIA} or {@code ASIA} and 16 capitals or digits). A Hugging Face, OpenAI-style or bearer
 * value is taken for a secret only when it looks random (it holds a digit, a capital after its first letter or
 * punctuation), so {@code hf_transfer}, {@code hf_overrides} and "Bearer authentication" stay.
 */
public final class SecretRedaction {

    /** What a secret is replaced with. */
    public static final String REDACTED = "<redacted>";

    /** Last words that make a name a secret. */
    private static final Set<String> SECRET_LAST_WORDS = Set.of(
            "token",
            "key",
            "apikey",
            "secret",
            "secrets",
            "password",
            "passwd",
            "pwd",
            "passphrase",
            "credential",
            "credentials",
            "authorization",
            "auth",
            "bearer");

    /** Words that make a name a secret wherever they stand (unless it names where the secret is). */
    private static final Set<String> SECRET_WORDS =
            Set.of("secret", "secrets", "password", "passwd", "passphrase", "credential", "credentials");

    /** Last words of a name that says where a secret is, not what it is. */
    private static final Set<String> REFERENCE_WORDS =
            Set.of("file", "path", "dir", "directory", "env", "name", "ref", "id", "mount", "enabled", "length");

    /** Words before {@code token} that make it a token of text (a tokenizer's special tokens, a timing per token). */
    private static final Set<String> TEXT_TOKEN_WORDS = Set.of(
            "bos", "eos", "pad", "unk", "sep", "cls", "mask", "special", "first", "last", "next", "per", "each",
            "output", "input", "prompt", "start", "stop", "end", "image", "vision", "audio", "video", "decoder");

    /** Bare values that hide nothing. */
    private static final Set<String> HARMLESS_VALUES = Set.of("none", "null", "true", "false", "nil", "undefined");

    /** Authorization schemes: the credential follows them after a space. */
    private static final Set<String> SCHEMES = Set.of("bearer", "basic", "token", "digest", "apikey");

    /**
     * A URL's user information: greedy to the authority's last {@code @}, so a password with a raw {@code @} is
     * redacted whole.
     */
    private static final Pattern USERINFO = Pattern.compile("(?i)\\b([a-z][a-z0-9+.-]*://)([^\\s/?#'\"<>]+)@");

    /**
     * Substrings without which a text holds nothing to redact (a fast path for log lines); the last, {@code @}, only
     * for user information in URLs.
     */
    private static final List<String> TRIGGERS =
            List.of("token", "key", "secret", "pass", "pwd", "credential", "auth", "bearer", "@");

    /** Substrings without which a text holds no secret of a well-known shape ({@link #SHAPES}). */
    private static final List<String> SHAPE_TRIGGERS = List.of("hf_", "sk-", "bearer", "eyj", "akia", "asia");

    /**
     * Secrets known by their value's shape. Group {@code random}: taken only when it looks random; group
     * {@code credential}: only it is replaced (the scheme before it stays).
     */
    private static final Pattern SHAPES = Pattern.compile(
            // A JWT: header (base64url of {" is eyJ), payload and signature (empty for alg none).
            "(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*"
                    // An AWS access key id: long-term (AKIA) or temporary (ASIA).
                    + "|(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"
                    // A Hugging Face token, an OpenAI-style key (sk-..., sk-proj-..., sk-ant-...).
                    + "|(?<![A-Za-z0-9_-])(?<random>hf_[A-Za-z0-9]{8,}|sk-[A-Za-z0-9][A-Za-z0-9_-]{7,})(?![A-Za-z0-9_-])"
                    // A bearer credential (RFC 6750's token68 characters), wherever the word stands.
                    + "|(?i:\\bbearer)\\s+(?<credential>[A-Za-z0-9._~+/=-]{6,})");

    private SecretRedaction() {}

    /** Whether a setting, argument, header or mapping key of this name holds a secret. */
    public static boolean isSecretName(String name) {
        List<String> words = words(name);
        if (words.isEmpty()) {
            return false;
        }
        String last = words.getLast();
        if (SECRET_LAST_WORDS.contains(last)) {
            return !(last.equals("token")
                    && words.size() > 1
                    && TEXT_TOKEN_WORDS.contains(words.get(words.size() - 2)));
        }
        return !REFERENCE_WORDS.contains(last) && words.stream().anyMatch(SECRET_WORDS::contains);
    }

    /** A URI as it may be shown: without user information or secret query values. */
    public static String redact(URI uri) {
        return redact(uri.toString());
    }

    /** The text with every secret it holds replaced by {@value #REDACTED}; null stays null. */
    public static @Nullable String redactNullable(@Nullable String text) {
        return text == null ? null : redact(text);
    }

    /** The text with every secret it holds replaced by {@value #REDACTED}. */
    public static String redact(String text) {
        String redacted = mayHoldSecret(text) ? redactEntries(redactUserInfo(text)) : text;
        return mayHoldShape(redacted) ? redactShapes(redacted) : redacted;
    }

    private static boolean mayHoldShape(String text) {
        for (String trigger : SHAPE_TRIGGERS) {
            if (containsIgnoreCase(text, trigger)) {
                return true;
            }
        }
        return false;
    }

    /** Replaces every value of a well-known secret shape ({@link #SHAPES}). */
    private static String redactShapes(String text) {
        Matcher matcher = SHAPES.matcher(text);
        StringBuilder out = null;
        int copied = 0;
        while (matcher.find()) {
            String random = matcher.group("random");
            String credential = matcher.group("credential");
            if ((random != null && !looksRandom(random.substring(3)))
                    || (credential != null && !looksRandom(credential))) {
                continue;
            }
            int start = credential != null ? matcher.start("credential") : matcher.start();
            if (out == null) {
                out = new StringBuilder(text.length());
            }
            out.append(text, copied, start).append(REDACTED);
            copied = matcher.end();
        }
        return out == null ? text : out.append(text, copied, text.length()).toString();
    }

    /** Whether a value looks generated rather than a word: a digit, a capital after the first letter, punctuation. */
    static boolean looksRandom(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (Character.isDigit(c) || (i > 0 && Character.isUpperCase(c)) || !Character.isLetterOrDigit(c)) {
                return true;
            }
        }
        return false;
    }

    private static boolean mayBeSecretName(String name) {
        for (int t = 0; t < TRIGGERS.size() - 1; t++) {
            if (containsIgnoreCase(name, TRIGGERS.get(t))) {
                return true;
            }
        }
        return false;
    }

    private static boolean mayHoldSecret(String text) {
        for (String trigger : TRIGGERS) {
            if (containsIgnoreCase(text, trigger)) {
                return true;
            }
        }
        return false;
    }

    private static boolean containsIgnoreCase(String text, String part) {
        int last = text.length() - part.length();
        for (int i = 0; i <= last; i++) {
            if (text.regionMatches(true, i, part, 0, part.length())) {
                return true;
            }
        }
        return false;
    }

    private static String redactUserInfo(String text) {
        if (text.indexOf('@') < 0) {
            return text;
        }
        Matcher matcher = USERINFO.matcher(text);
        StringBuilder out = new StringBuilder(text.length());
        while (matcher.find()) {
            matcher.appendReplacement(out, Matcher.quoteReplacement(matcher.group(1) + REDACTED + "@"));
        }
        matcher.appendTail(out);
        return out.toString();
    }

    /** The words of a name, lower case: {@code --hf-token} is [hf, token], {@code clientSecretKey} [client, ...]. */
    static List<String> words(String name) {
        List<String> words = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!Character.isLetterOrDigit(c)) {
                flush(words, word);
                continue;
            }
            if (Character.isUpperCase(c) && word.length() > 0) {
                char previous = name.charAt(i - 1);
                boolean nextLower = i + 1 < name.length() && Character.isLowerCase(name.charAt(i + 1));
                // clientSecret: a lower case letter before; APIKey: the last capital of an acronym before lower case.
                if (Character.isLowerCase(previous)
                        || Character.isDigit(previous)
                        || (Character.isUpperCase(previous) && nextLower)) {
                    flush(words, word);
                }
            }
            word.append(Character.toLowerCase(c));
        }
        flush(words, word);
        return words;
    }

    private static void flush(List<String> words, StringBuilder word) {
        if (word.length() > 0) {
            words.add(word.toString().toLowerCase(Locale.ROOT));
            word.setLength(0);
        }
    }

    private static boolean nameChar(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '-' || c == '.';
    }

    /** Finds each name followed by a value and redacts the value of those that are secrets. */
    private static String redactEntries(String text) {
        StringBuilder out = null;
        int copied = 0;
        int i = 0;
        while (i < text.length()) {
            if (!nameChar(text.charAt(i)) || (i > 0 && nameChar(text.charAt(i - 1)))) {
                i++;
                continue;
            }
            int end = i;
            while (end < text.length() && nameChar(text.charAt(end))) {
                end++;
            }
            String name = text.substring(i, end);
            Value value =
                    mayBeSecretName(name) && isSecretName(name) ? valueOf(text, i, end, name.startsWith("--")) : null;
            if (value == null) {
                i = end;
                continue;
            }
            String shown = value.replacement(text);
            if (out == null) {
                out = new StringBuilder(text.length());
            }
            out.append(text, copied, value.start()).append(shown);
            copied = value.end();
            i = value.end();
        }
        return out == null ? text : out.append(text, copied, text.length()).toString();
    }

    /** Where a value starts and ends, and how it was written (quoted, bracketed or bare). */
    private record Value(int start, int end, char quote) {

        String replacement(String text) {
            if (quote == '[') {
                return "'" + REDACTED + "'";
            }
            if (quote == 0) {
                return REDACTED;
            }
            boolean closed = end > start + 1 && text.charAt(end - 1) == quote;
            return quote + REDACTED + (closed ? String.valueOf(quote) : "");
        }
    }

    /**
     * The value that follows the name at {@code [nameStart, nameEnd)}, or null when no value follows it (the name is
     * a word of prose) or the value hides nothing.
     */
    private static @Nullable Value valueOf(String text, int nameStart, int nameEnd, boolean option) {
        int i = nameEnd;
        char before = nameStart > 0 ? text.charAt(nameStart - 1) : 0;
        boolean quoted = before == '\'' || before == '"';
        if (quoted) {
            if (i < text.length() && text.charAt(i) == '\\') {
                i++;
            }
            if (i >= text.length() || text.charAt(i) != before) {
                return null;
            }
            i++;
        }
        int afterName = i;
        i = skipSpaces(text, i);
        if (i < text.length() && (text.charAt(i) == '=' || text.charAt(i) == ':')) {
            i = skipSpaces(text, i + 1);
        } else if (option && quoted && i < text.length() && text.charAt(i) == ',') {
            // An argument list: ['--api-key', 'k'].
            i = skipSpaces(text, i + 1);
        } else if (!(option && i > afterName)) {
            // A command-line option takes its value after a space; any other name needs '=' or ':'.
            return null;
        }
        if (i >= text.length()) {
            return null;
        }
        char first = text.charAt(i);
        if (option && !quoted && first == '-') {
            return null;
        }
        if (first == '\\' && i + 1 < text.length() && (text.charAt(i + 1) == '"' || text.charAt(i + 1) == '\'')) {
            // A string escaped inside another (JSON in a JSON string): only what is between the escaped quotes goes.
            String close = text.substring(i, i + 2);
            int closing = text.indexOf(close, i + 2);
            return closing == i + 2 ? null : new Value(i + 2, closing < 0 ? text.length() : closing, (char) 0);
        }
        if (first == '\'' || first == '"') {
            int end = afterString(text, i);
            return end - i <= 2 && end > i + 1 && text.charAt(end - 1) == first ? null : new Value(i, end, first);
        }
        if (first == '[' || first == '(' || first == '{') {
            return new Value(i, afterBrackets(text, i), '[');
        }
        int end = bareEnd(text, i);
        if (end == i) {
            return null;
        }
        String word = text.substring(i, end);
        if (HARMLESS_VALUES.contains(word.toLowerCase(Locale.ROOT))) {
            return null;
        }
        if (SCHEMES.contains(word.toLowerCase(Locale.ROOT)) && end < text.length() && text.charAt(end) == ' ') {
            if (text.startsWith(REDACTED, end + 1)) {
                return null;
            }
            int credential = bareEnd(text, end + 1);
            if (credential > end + 1) {
                // Authorization: Bearer <credential>: the scheme is shown, the credential is not.
                return new Value(end + 1, credential, (char) 0);
            }
        }
        return new Value(i, end, (char) 0);
    }

    private static int bareEnd(String text, int start) {
        int i = start;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (Character.isWhitespace(c) || ",;&#)]}'\"<>".indexOf(c) >= 0) {
                return i;
            }
            i++;
        }
        return i;
    }

    /** The end (exclusive) of the bracketed literal opening at {@code open}, or the text's end. */
    private static int afterBrackets(String text, int open) {
        int depth = 0;
        int i = open;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '\'' || c == '"') {
                i = afterString(text, i);
                continue;
            }
            if (c == '[' || c == '(' || c == '{') {
                depth++;
            } else if (c == ']' || c == ')' || c == '}') {
                depth--;
                if (depth == 0) {
                    return i + 1;
                }
            }
            i++;
        }
        return text.length();
    }

    /** The index after the closing quote of the string opening at {@code open}, or the text's end. */
    private static int afterString(String text, int open) {
        char quote = text.charAt(open);
        int i = open + 1;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '\\') {
                i += 2;
            } else if (c == quote) {
                return i + 1;
            } else {
                i++;
            }
        }
        return text.length();
    }

    private static int skipSpaces(String text, int from) {
        int i = from;
        while (i < text.length() && text.charAt(i) == ' ') {
            i++;
        }
        return i;
    }
}
