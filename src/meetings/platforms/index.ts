import { GoogleMeetDriver, type GoogleMeetDriverOptions } from "./google-meet/meet-driver.js";
import type { PlatformDriver } from "./platform-driver.js";
import { TeamsDriver, type TeamsDriverOptions } from "./teams/teams-driver.js";
import { TestRoomDriver, type TestRoomDriverOptions } from "./test-room-driver.js";
import { ZoomDriver, type ZoomDriverOptions } from "./zoom/zoom-driver.js";

export interface PlatformDriversOptions {
  /** The local test meeting's driver, only when the test room is served (its origins: this server's). */
  testRoom?: TestRoomDriverOptions;
  googleMeet?: GoogleMeetDriverOptions;
  zoom?: ZoomDriverOptions;
  teams?: TeamsDriverOptions;
}

/** The drivers a server offers, in matching order. */
export function defaultPlatformDrivers(options: PlatformDriversOptions = {}): PlatformDriver[] {
  return [
    ...(options.testRoom ? [new TestRoomDriver(options.testRoom)] : []),
    new GoogleMeetDriver(options.googleMeet),
    new ZoomDriver(options.zoom),
    new TeamsDriver(options.teams),
  ];
}
