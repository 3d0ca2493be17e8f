package dev.readygate.gpu;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** The real nvidia-smi output captured on an H200 ({@code src/test/resources/nvidia-smi-h200/README.md}). */
final class Fixtures {

    static final long MIB = 1_048_576L;

    static final String H200_UUID = "GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da";

    private Fixtures() {}

    static String nvidiaSmi(String name) {
        return resource("/nvidia-smi-h200/" + name);
    }

    static Path nvidiaSmiPath(String name) {
        try {
            URL url = Objects.requireNonNull(Fixtures.class.getResource("/nvidia-smi-h200/" + name), name);
            return Path.of(url.toURI());
        } catch (URISyntaxException ex) {
            throw new IllegalStateException(ex);
        }
    }

    static String resource(String path) {
        try (InputStream in = Fixtures.class.getResourceAsStream(path)) {
            return new String(Objects.requireNonNull(in, path).readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** The lines under {@code [apps]} or {@code [gpu]} for one {@code === step} of {@code ipc.log}. */
    static String ipcLog(String step, String section) {
        List<String> lines = new ArrayList<>();
        boolean inStep = false;
        boolean inSection = false;
        for (String line : nvidiaSmi("ipc.log").lines().toList()) {
            if (line.startsWith("=== ")) {
                inStep = line.equals("=== " + step);
                inSection = false;
            } else if (line.startsWith("[")) {
                inSection = inStep && line.equals("[" + section + "]");
            } else if (line.isBlank()) {
                inSection = false;
            } else if (inSection) {
                lines.add(line);
            }
        }
        return lines.isEmpty() ? "" : String.join("\n", lines) + "\n";
    }
}
