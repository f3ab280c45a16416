# One image for every stage: build with Maven, run the swapstream jar as an unprivileged user.
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
# the poms first: the dependency layer is rebuilt only when they change
COPY pom.xml .
COPY schemas/pom.xml schemas/
COPY ingest/pom.xml ingest/
COPY decode/pom.xml decode/
COPY aggregate/pom.xml aggregate/
COPY cli/pom.xml cli/
COPY bench/pom.xml bench/
RUN mvn -B -q -ntp dependency:go-offline -pl cli -am || true
COPY . .
RUN mvn -B -q -ntp package -DskipTests -pl cli -am

FROM eclipse-temurin:17-jre
# curl for the healthchecks
RUN apt-get update && apt-get install -y --no-install-recommends curl && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/swapstream swapstream \
    && mkdir -p /var/lib/swapstream && chown swapstream /var/lib/swapstream
COPY --from=build /src/cli/target/swapstream.jar /opt/swapstream/swapstream.jar
USER swapstream
# state volumes mounted here start owned by the user above
VOLUME /var/lib/swapstream
EXPOSE 8080 8081
# out of memory, a stage would limp on with a dead thread: end it and let the restart policy act
ENTRYPOINT ["java", "-XX:+ExitOnOutOfMemoryError", "-XX:MaxRAMPercentage=75", "-jar", "/opt/swapstream/swapstream.jar"]
