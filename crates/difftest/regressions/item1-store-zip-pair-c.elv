def s = DFNF ;
  try(storeInMemory(isApp(isApp(isMap)), lowerToC) @ argument @ outermost(appliedMap)) ;;
  lowerToC
