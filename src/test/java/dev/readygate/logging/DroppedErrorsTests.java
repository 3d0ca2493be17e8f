package dev.readygate.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationListener;
import org.springframework.core.io.support.SpringFactoriesLoader;
import reactor.core.publisher.Operators;
import reactor.netty.channel.AbortedException;
import reactor.util.context.Context;

class DroppedErrorsTests {

    private static final String RELEASED = "The client response body has been released already due to cancellation.";

    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    private final ListAppender<ILoggingEvent> events = new ListAppender<>();

    @BeforeEach
    void capture() {
        events.start();
        root.addAppender(events);
        ((Logger) LoggerFactory.getLogger(DroppedErrors.class)).setLevel(Level.DEBUG);
        DroppedErrors.install();
    }

    @AfterEach
    void release() {
        root.detachAppender(events);
        ((Logger) LoggerFactory.getLogger(DroppedErrors.class)).setLevel(null);
    }

    @Test
    void aBodyReleasedAfterATimeoutCancelledItsExchangeIsNoError() {
        // What the demo printed under load, with a stack trace: a probe's timeout cancelled the exchange as the
        // body's read began; the body's failure then had no subscriber left.
        Operators.onErrorDropped(new IllegalStateException(RELEASED), Context.empty());
        Operators.onErrorDropped(new RuntimeException("wrapped", AbortedException.beforeSend()), Context.empty());

        assertThat(levels()).doesNotContain(Level.ERROR, Level.WARN);
        assertThat(events.list)
                .filteredOn(event -> event.getLoggerName().equals(DroppedErrors.class.getName()))
                .hasSize(2)
                .allSatisfy(event -> assertThat(event.getLevel()).isEqualTo(Level.DEBUG));
    }

    @Test
    void anyOtherDroppedErrorIsAWarningWithItsCause() {
        Operators.onErrorDropped(new IllegalStateException("a bug after cancel"), Context.empty());

        assertThat(levels()).doesNotContain(Level.ERROR);
        assertThat(events.list)
                .filteredOn(event -> event.getLevel() == Level.WARN)
                .singleElement()
                .satisfies(event ->
                        assertThat(event.getThrowableProxy().getMessage()).isEqualTo("a bug after cancel"));
    }

    @Test
    void installedTwiceItStillLogsOnce() {
        DroppedErrors.install();
        Operators.onErrorDropped(new IllegalStateException("once"), Context.empty());

        assertThat(events.list)
                .filteredOn(event -> event.getLevel() == Level.WARN)
                .hasSize(1);
    }

    @Test
    void everyApplicationOfTheJarInstallsIt() {
        assertThat(SpringFactoriesLoader.forDefaultResourceLocation().load(ApplicationListener.class))
                .anySatisfy(listener -> assertThat(listener).isInstanceOf(DroppedErrors.class));
    }

    private List<Level> levels() {
        return events.list.stream().map(ILoggingEvent::getLevel).toList();
    }
}
