package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.readiness.EngineStateChanged;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.EventListener;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.Order;

/**
 * {@code docs/architecture.md}'s table of who hears of an engine state change is the rule: every listener of
 * {@link EngineStateChanged} in the main code is in it, with its {@code @Order}, and nothing else is.
 */
class ListenerOrderTests {

    static final Path SOURCES = Path.of("src/main/java");
    static final Pattern ROW = Pattern.compile("^\\| (\\d+|last) \\| `([a-z]+\\.[A-Za-z]+\\.[A-Za-z]+)` \\|.*$");
    static final String LAST = "last";

    /** The table: {@code package.Class.method}, its order ("last": no {@code @Order}). */
    static Map<String, String> documented() throws IOException {
        Map<String, String> listeners = new TreeMap<>();
        for (Matcher row : ArchitectureTests.tableRows("| Order | Listener |", ROW)) {
            listeners.put(row.group(2), row.group(1));
        }
        return listeners;
    }

    /** The code: every {@code @EventListener} method of a main class that hears {@link EngineStateChanged}. */
    static Map<String, String> listening() throws IOException, ClassNotFoundException {
        Map<String, String> listeners = new TreeMap<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                String name =
                        SOURCES.relativize(file).toString().replace('/', '.').replaceAll("\\.java$", "");
                if (name.endsWith("package-info")) {
                    continue;
                }
                Class<?> type = Class.forName(name, false, ListenerOrderTests.class.getClassLoader());
                assertThat(ApplicationListener.class.isAssignableFrom(type) && hearsChanges(type))
                        .as("%s listens through ApplicationListener, not @EventListener", name)
                        .isFalse();
                for (Method method : type.getDeclaredMethods()) {
                    EventListener listener = AnnotatedElementUtils.findMergedAnnotation(method, EventListener.class);
                    if (listener != null && hears(method, listener)) {
                        Order order = AnnotatedElementUtils.findMergedAnnotation(method, Order.class);
                        listeners.put(
                                name.substring("dev.readygate.".length()) + "." + method.getName(),
                                order == null ? LAST : String.valueOf(order.value()));
                    }
                }
            }
        }
        return listeners;
    }

    static boolean hears(Method method, EventListener listener) {
        return Arrays.asList(listener.classes()).contains(EngineStateChanged.class)
                || Arrays.asList(listener.value()).contains(EngineStateChanged.class)
                || (method.getParameterCount() == 1 && method.getParameterTypes()[0] == EngineStateChanged.class);
    }

    static boolean hearsChanges(Class<?> type) {
        return Arrays.stream(type.getGenericInterfaces())
                .anyMatch(generic -> generic.getTypeName().contains(EngineStateChanged.class.getName()));
    }

    @Test
    void everyListenerOfAnEngineStateChangeIsInTheTableWithItsOrder() throws Exception {
        assertThat(documented()).isNotEmpty().isEqualTo(listening());
    }

    @Test
    void theOrderedListenersHaveOrdersOfTheirOwn() throws Exception {
        assertThat(documented().values().stream().filter(order -> !order.equals(LAST)))
                .doesNotHaveDuplicates();
    }
}
