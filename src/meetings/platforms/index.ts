import { GoogleMeetDriver, type GoogleMeetDriverOptions } from "./google-meet/meet-driver.js";
import type { PlatformDriver } from "./platform-driver.js";
import { TestRoomDriver } from "./test-room-driver.js";

export interface PlatformDriversOptions {
  googleMeet?: GoogleMeetDriverOptions;
}

/** The drivers a server offers, in matching order. */
export function defaultPlatformDrivers(options: PlatformDriversOptions = {}): PlatformDriver[] {
  return [new TestRoomDriver(), new GoogleMeetDriver(options.googleMeet)];
}
