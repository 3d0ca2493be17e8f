package dev.readygate.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.engine.EngineMetricsSample;
import java.time.Duration;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@link GenerationBudget}: a light check's budget from the engine's measured speed, as a table. */
class GenerationBudgetTests {

    /** The defaults: {@code generation.timeout} 750 ms the floor, {@code heavy-timeout} 30 s the ceiling. */
    static final GenerationBudget DEFAULTS = new GenerationBudget(Duration.ofMillis(750), Duration.ofSeconds(30));

    /** The probe's TTFT, prompt and mean ITL; the check's prompt ({@code p}) and output ({@code n}) tokens. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', nullValues = "-", textBlock = """
            # case                             | TTFT ms | prompt | ITL ms | check p | check n | waiting | ms
            nothing measured yet: the floor    | -       | -      | -      | 8       | 2       | 0       | 750
            a GPU: far below the floor         | 30      | 512    | 10     | 8       | 2       | 0       | 750
            a CPU engine, the generation check | 6000    | 512    | 150    | 8       | 2       | 0       | 1575
            a CPU engine, the canary instead   | 6000    | 512    | 150    | 16      | 1       | 0       | 1350
            a slower CPU engine                | 20000   | 512    | 900    | 8       | 2       | 0       | 8450
            one output token measured: no gap  | 2000    | 512    | 0      | 8       | 2       | 0       | 16125
            slower than the ceiling            | 60000   | 512    | 5000   | 8       | 2       | 0       | 30000
            a GPU, 3 requests waiting          | 30      | 512    | 10     | 8       | 2       | 3       | 3000
            a CPU engine, 2 requests waiting   | 6000    | 512    | 150    | 8       | 2       | 2       | 4725
            so many waiting: the ceiling       | 6000    | 512    | 150    | 8       | 2       | 100     | 30000
            without /metrics: the ceiling      | 30      | 512    | 10     | 8       | 2       | -1      | 30000
            without /metrics, nothing measured | -       | -      | -      | 8       | 2       | -1      | 30000
            """)
    void aLightChecksBudgetFollowsTheMeasuredSpeedBetweenFloorAndCeiling(
            String name,
            @Nullable Long ttftMillis,
            @Nullable Integer promptTokens,
            @Nullable Long itlMillis,
            int checkPrompt,
            int checkOutput,
            int waiting,
            long budgetMillis) {
        EngineFacts.Speed speed = ttftMillis == null || promptTokens == null || itlMillis == null
                ? null
                : new EngineFacts.Speed(promptTokens, Duration.ofMillis(ttftMillis), Duration.ofMillis(itlMillis));
        EngineMetricsSample before =
                waiting < 0 ? null : new EngineMetricsSample(null, 0.0, (double) waiting, 0.0, 0.0, 0.0, Map.of());

        Duration budget = DEFAULTS.of(before, speed, new EngineLoad.OwnTokens(checkPrompt, checkOutput));

        assertThat(budget.toMillis()).as(name).isEqualTo(budgetMillis);
    }
}
