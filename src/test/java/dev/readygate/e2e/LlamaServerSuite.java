package dev.readygate.e2e;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Optional;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Marks a test class that needs llama.cpp's {@code llama-server} ({@link LlamaServer#binary()}). Without a binary the
 * class is skipped, and says so loudly on the console: the real-engine suite did not run. With
 * {@code -Dreadygate.test.llama-server.required=true} (as {@code .ci/run} passes it) a missing binary fails instead.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(LlamaServerSuite.Condition.class)
@interface LlamaServerSuite {

    /** Enables the class when a binary is there; fails or loudly skips otherwise. */
    final class Condition implements ExecutionCondition {

        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            Optional<java.nio.file.Path> binary = LlamaServer.binary();
            if (binary.isPresent()) {
                return ConditionEvaluationResult.enabled("llama-server: " + binary.get());
            }
            String message = "THE REAL-ENGINE SUITE DID NOT RUN: " + context.getDisplayName()
                    + " needs llama.cpp's llama-server. Pass it with -D" + LlamaServer.PROPERTY
                    + "=/path/to/llama-server"
                    + " or the environment variable " + LlamaServer.ENVIRONMENT + ", or put it on the PATH (README,"
                    + " \"The real-engine suite\"; .ci/run builds one).";
            if (Boolean.getBoolean(LlamaServer.REQUIRED)) {
                throw new IllegalStateException(message);
            }
            String bar = "*".repeat(100);
            System.err.println(bar + "\n" + message + "\n" + bar);
            return ConditionEvaluationResult.disabled(message);
        }
    }
}
