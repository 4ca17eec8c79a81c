def s = DFNF ;
  try(storeInMemory(appliedMap, lowerToC) @ argument @ outermost(appliedMap)) ;;
  lowerToC
