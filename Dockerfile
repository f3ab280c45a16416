# One image for every stage: build with Maven, run the swapstream jar.
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY . .
RUN mvn -B -q package -DskipTests -pl cli -am

FROM eclipse-temurin:17-jre
COPY --from=build /src/cli/target/swapstream.jar /opt/swapstream/swapstream.jar
ENTRYPOINT ["java", "-jar", "/opt/swapstream/swapstream.jar"]
