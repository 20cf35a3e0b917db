// The modules src/bus/rxjs.ts requires, typed as the `rxjs` entry that re-exports them. TypeScript's `node`
// module resolution does not read package exports, where `rxjs/internal/*` is mapped.
declare module 'rxjs/internal/Subject' {
  export { Subject } from 'rxjs';
}
declare module 'rxjs/internal/BehaviorSubject' {
  export { BehaviorSubject } from 'rxjs';
}
declare module 'rxjs/internal/Observable' {
  export { Observable } from 'rxjs';
}
declare module 'rxjs/internal/operators/filter' {
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the re-export names every overload
  export { filter } from 'rxjs';
}
