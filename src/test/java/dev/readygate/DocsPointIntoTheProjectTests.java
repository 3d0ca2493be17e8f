package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The project's documentation points only into the project: no README, doc or chart file names a folder a clone does
 * not have (the workspace's {@code shared/}), and every relative Markdown link of README.md and docs/*.md reaches a
 * file of the repository. Facts from outside are cited by their public source (docs/simulator.md's Sources).
 */
class DocsPointIntoTheProjectTests {

    static final List<String> OUTSIDE = List.of("shared/reference", "shared/engines", "shared/guides", "../shared");

    /** {@code ](target)} or {@code ](target "title")}: the target, up to white space or the closing bracket. */
    static final Pattern LINK = Pattern.compile("\\]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");

    static final Pattern FENCED = Pattern.compile("^\\s*(```|~~~).*?^\\s*\\1", Pattern.MULTILINE | Pattern.DOTALL);

    static final Pattern INLINE_CODE = Pattern.compile("``.*?``|`[^`\\n]*`");

    static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");

    /** README.md, docs/**&#47;*.md and every text file under charts/. */
    static List<Path> documentation() throws IOException {
        List<Path> files = new ArrayList<>(List.of(Path.of("README.md")));
        try (Stream<Path> docs = Files.walk(Path.of("docs"))) {
            docs.filter(Files::isRegularFile)
                    .filter(file -> file.toString().endsWith(".md"))
                    .sorted()
                    .forEach(files::add);
        }
        try (Stream<Path> charts = Files.walk(Path.of("charts"))) {
            charts.filter(Files::isRegularFile).sorted().forEach(files::add);
        }
        return files;
    }

    /** The file as UTF-8 text, or empty for a binary file. */
    static Optional<String> text(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        for (byte b : bytes) {
            if (b == 0) {
                return Optional.empty();
            }
        }
        try {
            return Optional.of(StandardCharsets.UTF_8
                    .newDecoder()
                    .decode(ByteBuffer.wrap(bytes))
                    .toString());
        } catch (CharacterCodingException ex) {
            return Optional.empty();
        }
    }

    @Test
    void noDocumentationNamesTheWorkspacesSharedFolder() throws IOException {
        List<Path> files = documentation();
        assertThat(files).contains(Path.of("README.md"), Path.of("docs/simulator.md"));
        List<String> found = new ArrayList<>();
        for (Path file : files) {
            Optional<String> text = text(file);
            if (text.isEmpty()) {
                continue;
            }
            List<String> lines = text.get().lines().toList();
            for (int i = 0; i < lines.size(); i++) {
                for (String outside : OUTSIDE) {
                    if (lines.get(i).contains(outside)) {
                        found.add(file + ":" + (i + 1) + " names " + outside);
                    }
                }
            }
        }
        assertThat(found)
                .as("cite the public source instead of a folder a clone does not have")
                .isEmpty();
    }

    @Test
    void everyRelativeMarkdownLinkReachesAFileOfTheRepository() throws IOException {
        List<Path> files = new ArrayList<>(List.of(Path.of("README.md")));
        try (Stream<Path> docs = Files.list(Path.of("docs"))) {
            docs.filter(file -> file.toString().endsWith(".md")).sorted().forEach(files::add);
        }
        Path root = Path.of("").toAbsolutePath().normalize();
        List<String> checked = new ArrayList<>();
        List<String> broken = new ArrayList<>();
        for (Path file : files) {
            String text = Files.readString(file);
            text = FENCED.matcher(text).replaceAll(" ");
            text = INLINE_CODE.matcher(text).replaceAll("");
            Matcher link = LINK.matcher(text);
            while (link.find()) {
                String target = link.group(1);
                if (SCHEME.matcher(target).find() || target.startsWith("#")) {
                    continue;
                }
                int anchor = target.indexOf('#');
                String path =
                        URLDecoder.decode(anchor < 0 ? target : target.substring(0, anchor), StandardCharsets.UTF_8);
                Path resolved = file.toAbsolutePath().getParent().resolve(path).normalize();
                checked.add(file + " -> " + target);
                if (!resolved.startsWith(root) || !Files.exists(resolved)) {
                    broken.add(file + " -> " + target);
                }
            }
        }
        assertThat(checked).as("README.md and docs/*.md link into the project").isNotEmpty();
        assertThat(broken)
                .as("relative links that reach no file of the repository")
                .isEmpty();
    }
}
