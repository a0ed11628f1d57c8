import { GoogleMeetDriver } from "./google-meet/meet-driver.js";
import type { PlatformDriver } from "./platform-driver.js";
import { TestRoomDriver } from "./test-room-driver.js";

/** The drivers a server offers, in matching order. */
export function defaultPlatformDrivers(): PlatformDriver[] {
  return [new TestRoomDriver(), new GoogleMeetDriver()];
}
